import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { STDIO_FIXTURE, text, useHubs } from "./harness.js";

const ctx = useHubs();

/**
 * `env`, `args` and `headers` values reach the server as text: a number written unquoted in config.yaml
 * keeps the text written (`3.10`, not the float's `3.1`; `0755`, not `755`).
 */
describe("unquoted numbers among a stdio server's env and args", () => {
  it("reach the process as written", async () => {
    ctx.home.write(
      "config.yaml",
      [
        "mcp_servers:",
        "  fx:",
        `    command: ${JSON.stringify(process.execPath)}`,
        `    args: [${JSON.stringify(STDIO_FIXTURE)}, legacy, 1.50]`,
        "    env: { PYVER: 3.10, UMASK: 0755, HEX: 0x1F, BIG: 1e3, ID: 12345678901234567890, N: 7 }",
        "    headers: { X-Version: 2.10 }",
        "",
      ].join("\n"),
    );
    const entry = loadConfig({ home: ctx.home.dir, env: {} }).config.mcp_servers.fx;
    expect(entry?.args.slice(1)).toEqual(["legacy", "1.50"]);
    expect(entry?.headers).toEqual({ "X-Version": "2.10" });
    const h = ctx.hub(ctx.home, { fx: entry as NonNullable<typeof entry> });
    await h.settled("fx");
    const env = async (name: string) => text(await h.call("fx", "env", { name }));
    expect(await env("PYVER")).toBe("3.10");
    expect(await env("UMASK")).toBe("0755");
    expect(await env("HEX")).toBe("0x1F");
    expect(await env("BIG")).toBe("1e3");
    expect(await env("ID")).toBe("12345678901234567890");
    expect(await env("N")).toBe("7");
  });
});
