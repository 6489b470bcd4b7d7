import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { writeSchemaCache } from "../../../src/io/mcp/schemaCache.js";
import { svc } from "../cli/svc.js";
import { entry, stdioEntry, useHubs } from "./harness.js";

const ctx = useHubs();

/**
 * Lazy servers register their tools from the schema cache; a name a server listed earlier takes is shown
 * as a collision and counted out of the tool count, as for a connected server. No process is started.
 */
describe("a lazy server that loses a name to a server listed earlier", () => {
  it("its tool count leaves the lost tool out, as svc mcp list's status does for a connected one", () => {
    const first = stdioEntry("legacy", { lazy: true });
    const second = stdioEntry("legacy", { lazy: true, timeout: 30 });
    const tool = (name: string) => ({ name, inputSchema: { type: "object" as const } });
    const none = { resources: false, prompts: false };
    const cache = join(ctx.home.dir, "mcp-cache");
    writeSchemaCache(cache, "a.b", first, [tool("x"), tool("y")], none);
    writeSchemaCache(cache, "a_b", second, [tool("x"), tool("z")], none);
    const h = ctx.hub(ctx.home, { "a.b": first, a_b: second });
    const status = Object.fromEntries(h.status().map((s) => [s.name, s]));
    expect(status["a.b"]).toMatchObject({ state: "lazy", toolCount: 2, collisions: [] });
    expect(status.a_b).toMatchObject({
      state: "lazy",
      toolCount: 1,
      collisions: [
        'a_b: "x" registers as mcp__a_b__x, already taken by server a.b (listed earlier in mcp_servers); skipped',
      ],
    });
    expect(h.tools().map((t) => `${t.server}:${t.name}`)).toEqual([
      "a.b:mcp__a_b__x",
      "a.b:mcp__a_b__y",
      "a_b:mcp__a_b__z",
    ]);
  });
});

describe("svc mcp list --no-check (no gateway)", () => {
  it("counts a server's tools as the gateway registers them: a name a server listed earlier takes is left out and shown", async () => {
    const raw = {
      "a.b": { command: "srv-ab", lazy: true },
      a_b: { command: "srv-a_b" },
    };
    ctx.home.write("config.yaml", stringify({ mcp_servers: raw }));
    const tool = (name: string) => ({ name, inputSchema: { type: "object" as const } });
    const none = { resources: false, prompts: false };
    const cache = join(ctx.home.dir, "mcp-cache");
    writeSchemaCache(cache, "a.b", entry(raw["a.b"]), [tool("x"), tool("y")], none);
    writeSchemaCache(cache, "a_b", entry(raw.a_b), [tool("x"), tool("z")], none);
    const res = await svc(ctx.home, ["mcp", "list", "--no-check"]);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/\na\.b +stdio +lazy +2 +yes +yes *\n/);
    expect(res.stdout).toMatch(
      /\na_b +stdio +stopped +1 +no +yes +collision: a_b: "x" registers as mcp__a_b__x, already taken by server a\.b/,
    );
  });
});
