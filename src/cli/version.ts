import { readFileSync } from "node:fs";

const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
  version: string;
};

export const VERSION: string = pkg.version;
/** Sent on OAuth discovery, registration and token requests (mcp-client spec 5.9). */
export const USER_AGENT = `Svc-Agent/${VERSION}`;
