import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "../cli/svc.js";

let home: TempHome;
afterEach(() => home?.cleanup());

const link = (name: string, config: unknown) =>
  `svc://mcp/install?name=${name}&config=${Buffer.from(JSON.stringify(config)).toString("base64url")}`;

/**
 * Spec 4.1: the link's config "may carry any server key above". A key svc does not know, or a bad
 * value, would make config.yaml unloadable (every later svc command and the gateway would refuse it),
 * so such a link is rejected with the key and the problem before anything is shown or written.
 */
describe("svc mcp install: the entry must be a valid server entry", () => {
  const original = "# my servers\nmcp_servers: {}\n";
  for (const [what, config, reason] of [
    [
      "an unknown key",
      { url: "https://x.test/mcp", colour: "blue" },
      /config: mcp_servers\.srv: unknown key "colour" — check the spelling \(see docs\/mcp\.md\)/,
    ],
    [
      "a bad duration",
      { url: "https://x.test/mcp", timeout: "soon" },
      /config: mcp_servers\.srv\.timeout: expected seconds, got "soon"/,
    ],
    [
      "a bad enum",
      { command: "npx", protocol: "modern" },
      /config: mcp_servers\.srv\.protocol: expected one of "auto", "stateless", "legacy", got "modern"/,
    ],
  ] as const) {
    it(`rejects ${what}, naming it, and writes nothing`, async () => {
      home = tempHome();
      home.write("config.yaml", original);
      const r = await svc(home, ["mcp", "install", link("srv", config)], { input: "y\n" });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/install link rejected: /);
      expect(r.stderr).toMatch(reason);
      expect(r.stdout).not.toContain("Install MCP server");
      expect(readFileSync(join(home.dir, "config.yaml"), "utf8")).toBe(original);
    });
  }
});
