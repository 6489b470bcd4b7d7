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

/**
 * A null in a JSON entry's tool list is JSON's null, not an entry left empty or written ~ in config.yaml: the
 * refusal says so in JSON's words.
 */
it("svc mcp install: a null in the link's tools.include is refused as a null entry, without YAML's words", async () => {
  home = tempHome();
  const original = "mcp_servers: {}\n";
  home.write("config.yaml", original);
  const refusal = async (tools: unknown) => {
    const r = await svc(home, ["mcp", "install", link("srv", { command: "npx", tools })], { input: "y\n" });
    expect(r.code).toBe(1);
    expect(r.stderr).not.toContain("YAML");
    expect(readFileSync(join(home.dir, "config.yaml"), "utf8")).toBe(original);
    return r.stderr.trimEnd();
  };
  expect(await refusal({ include: ["a", null] })).toBe(
    'svc: install link rejected: config: mcp_servers.srv.tools.include: expected a tool name, a glob, or a list of them, got ["a",null] — a null entry names no tool: remove it',
  );
  expect(await refusal({ exclude: [null, 7, null] })).toBe(
    "svc: install link rejected: config: mcp_servers.srv.tools.exclude: expected a tool name, a glob, or a list of them, got [null,7,null] — put 7 in quotes if it is meant as text — 2 null entries name no tool: remove them",
  );
});

/**
 * `"include": null` alone (Python's json.dumps of None; in config.yaml the key left unset) names no tool: the
 * refusal says what to write instead, the key removed or the tools named.
 */
it("svc mcp install: a null alone as the link's tools.include or exclude is refused with what to write instead", async () => {
  home = tempHome();
  const original = "mcp_servers: {}\n";
  home.write("config.yaml", original);
  const refusal = async (tools: unknown) => {
    const r = await svc(home, ["mcp", "install", link("srv", { command: "npx", tools })], { input: "y\n" });
    expect(r.code).toBe(1);
    expect(readFileSync(join(home.dir, "config.yaml"), "utf8")).toBe(original);
    return r.stderr.trimEnd();
  };
  expect(await refusal({ include: null })).toBe(
    "svc: install link rejected: config: mcp_servers.srv.tools.include: expected a tool name, a glob, or a list of them, got null — a null names no tool: remove the key to expose every tool of the server, or name the tools to expose",
  );
  expect(await refusal({ exclude: null })).toBe(
    "svc: install link rejected: config: mcp_servers.srv.tools.exclude: expected a tool name, a glob, or a list of them, got null — a null names no tool: remove the key to leave no tool out, or name the tools to leave out",
  );
});
