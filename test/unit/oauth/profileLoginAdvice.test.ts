import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { makeJob } from "../../../src/actors/oauth/context.js";
import { usableTokens } from "../../../src/actors/oauth/refresh.js";
import { svcPaths } from "../../../src/config/paths.js";
import { silentLogger } from "../../../src/io/log.js";

/**
 * The gateway keeps one set of MCP connections per profile: a named profile's server that has no login
 * of its own fails its background connect with the login to run, which must be that profile's.
 */
const homes: string[] = [];
afterEach(() => {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

function job(profile: string | undefined, flow?: "device") {
  const home = mkdtempSync(join(tmpdir(), "svc-login-advice-"));
  homes.push(home);
  return makeJob(
    "notes",
    { url: "https://mcp.example.test/mcp", auth: "oauth", oauth: flow === undefined ? {} : { flow } },
    { paths: svcPaths(home, profile), logger: silentLogger(), fetch: async () => new Response("") },
  );
}

describe("the login a server without tokens asks for names the profile the tokens belong to", () => {
  it("a named profile's: svc mcp login <server> --profile <name>", async () => {
    await expect(usableTokens(job("work"))).rejects.toThrow(
      "notes: not logged in — run `svc mcp login notes --profile work`",
    );
    await expect(usableTokens(job("work", "device"))).rejects.toThrow(
      "notes: not logged in — run `svc mcp login notes --profile work --flow device`",
    );
  });

  it("the default profile's: svc mcp login <server>, as before", async () => {
    await expect(usableTokens(job(undefined))).rejects.toThrow(
      "notes: not logged in — run `svc mcp login notes`",
    );
  });
});
