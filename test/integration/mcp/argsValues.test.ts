import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { useHubs } from "./harness.js";

const ctx = useHubs();

/** `args: [--flag, true, null]`: YAML reads `true` as a boolean and `null` as no value, not text. */
describe("an args entry that is not text", () => {
  it("a null entry names the file, the entry as args[i], and says to quote it", () => {
    ctx.home.write(
      "config.yaml",
      ["mcp_servers:", "  fx:", "    command: node", "    args: [--verbose, true, null, off]", ""].join("\n"),
    );
    const file = `${ctx.home.dir}/config.yaml`;
    expect(() => loadConfig({ home: ctx.home.dir, env: {} })).toThrow(
      `${file}: mcp_servers.fx.args[2]: has no value — write "" for an empty argument, or remove the entry`,
    );
  });

  it("a boolean in args, env or headers is passed on as true/false", () => {
    ctx.home.write(
      "config.yaml",
      [
        "mcp_servers:",
        "  fx:",
        "    command: node",
        "    args: [--verbose, true, false, off]",
        "    env: { FLAG: true }",
        "  api:",
        "    url: https://a.test/mcp",
        "    headers: { X-Flag: true, X-Off: false }",
        "",
      ].join("\n"),
    );
    const servers = loadConfig({ home: ctx.home.dir, env: {} }).config.mcp_servers;
    expect(servers.fx?.args).toEqual(["--verbose", "true", "false", "off"]);
    expect(servers.fx?.env).toEqual({ FLAG: "true" });
    expect(servers.api?.headers).toEqual({ "X-Flag": "true", "X-Off": "false" });
  });
});
