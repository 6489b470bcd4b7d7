import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { useHubs } from "./harness.js";

const ctx = useHubs();

/** `args: [--flag, true, null]`: YAML reads `true` as a boolean and `null` as no value, not text. */
describe("an args entry that is not text", () => {
  it("names the file, the entry as args[i], and says to quote it", () => {
    ctx.home.write(
      "config.yaml",
      ["mcp_servers:", "  fx:", "    command: node", "    args: [--verbose, true, null, off]", ""].join("\n"),
    );
    const file = `${ctx.home.dir}/config.yaml`;
    expect(() => loadConfig({ home: ctx.home.dir, env: {} })).toThrow(
      [
        `${file}: mcp_servers.fx.args[1]: expected a string, got true — put it in quotes ("true") to pass it as an argument`,
        `${file}: mcp_servers.fx.args[2]: has no value — write "" for an empty argument, or remove the entry`,
      ].join("\n"),
    );
  });
});
