import { readFileSync } from "node:fs";

const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
  version: string;
};

export const VERSION: string = pkg.version;
/** Sent on OAuth discovery, registration and token requests (the MCP authorization flow). */
export const USER_AGENT = `Svc-Agent/${VERSION}`;
