import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { writeSchemaCache } from "../../../src/io/mcp/schemaCache.js";
import { svc } from "../cli/svc.js";
import { entry, useHubs } from "./harness.js";

const ctx = useHubs();

/**
 * A lazy server with a schema cache is registered from the cache and started only by its first tool call;
 * status surfaces show it lazy with its cached tool count until then. `svc mcp list` without a gateway
 * must not start it to check it (`svc mcp test --all` does: that is the explicit test). The commands are
 * programs that do not exist, so a started server would show `failed: command not found`.
 */
describe("svc mcp list (no gateway) and a lazy server with a schema cache", () => {
  it("shows it lazy with its cached tool count, without starting it", async () => {
    const raw = {
      sleepy: { command: "svc-test-no-such-lazy-server", lazy: true, tools: { exclude: ["y"] } },
      eager: { command: "svc-test-no-such-eager-server" },
    };
    ctx.home.write("config.yaml", stringify({ mcp_servers: raw }));
    const tool = (name: string) => ({ name, inputSchema: { type: "object" as const } });
    writeSchemaCache(join(ctx.home.dir, "mcp-cache"), "sleepy", entry(raw.sleepy), [tool("x"), tool("y")], {
      resources: false,
      prompts: false,
    });
    const list = await svc(ctx.home, ["mcp", "list", "--timeout", "5"]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(
      /^sleepy\s+stdio\s+lazy \(1 tool from the schema cache; connects at its first call\)$/m,
    );
    expect(list.stdout).toMatch(/^eager\s+stdio\s+failed: command not found/m);
    const all = await svc(ctx.home, ["mcp", "test", "--all", "--timeout", "5"]);
    expect(all.stdout).toMatch(/^sleepy\s+stdio\s+failed: command not found/m);
  });
});
