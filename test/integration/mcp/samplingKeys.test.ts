import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { STDIO_FIXTURE, text, useHubs } from "./harness.js";

const ctx = useHubs();

/**
 * Spec 2.1 `sampling`: "Policy for server-initiated model requests. Inner fields: not shown." A sampling
 * mapping written with fields svc does not use must not stop the configuration from loading; the
 * common `max_tokens_cap` / `max_rpm` spellings are honoured.
 */
describe("sampling mapping with other clients' fields", () => {
  it("loads, ignores unknown fields and maps max_tokens_cap / max_rpm", async () => {
    ctx.home.write(
      "config.yaml",
      [
        "mcp_servers:",
        "  fx:",
        `    command: ${JSON.stringify(process.execPath)}`,
        `    args: [${JSON.stringify(STDIO_FIXTURE)}]`,
        "    sampling:",
        "      enabled: true",
        "      model: my-model",
        "      max_tokens_cap: 100",
        "      max_rpm: 1",
        "      allowed_models: []",
        "      max_tool_rounds: 5",
        "      log_level: info",
        "",
      ].join("\n"),
    );
    const { config } = loadConfig({ home: ctx.home.dir, env: {} });
    expect(config.mcp_servers.fx?.sampling).toEqual({
      enabled: true,
      model: "my-model",
      max_tokens: 100,
      max_requests_per_minute: 1,
      timeout: 300,
    });
    const seen: number[] = [];
    const h = ctx.hub(ctx.home, config.mcp_servers, {
      runner: async (request) => {
        seen.push(request.maxTokens);
        return "sampled";
      },
    });
    expect(text(await h.call("fx", "sample", { prompt: "hi" }))).toBe("my-model:sampled");
    expect(seen).toEqual([100]);
    const second = await h.call("fx", "sample", { prompt: "again" });
    expect(second.isError).toBe(true);
    expect(text(second)).toMatch(/rate limit/);
  });
});
