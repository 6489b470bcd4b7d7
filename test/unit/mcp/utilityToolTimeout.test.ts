import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it, vi } from "vitest";
import { runUtilityTool } from "../../../src/actors/mcp/utilityTools.js";
import type { McpSession } from "../../../src/io/mcp/session.js";

/**
 * `timeout` bounds a whole utility call (docs/mcp.md, Tool calls): a list read page by page does not get
 * the full `timeout` again for each page. A fake clock that moves 200 ms per page; no real waiting.
 */
describe("a paged utility list under timeout", () => {
  it("gives each page what is left of the timeout and fails as a timeout once it is spent", async () => {
    let t = 0;
    const timeouts: number[] = [];
    const session = {
      client: {
        request: async (
          request: { method: string; params: { cursor?: string } },
          _schema: unknown,
          options: { timeout: number },
        ) => {
          expect(request.method).toBe("prompts/list");
          timeouts.push(options.timeout);
          t += 200;
          const n = Number(request.params.cursor ?? 0);
          return { prompts: [{ name: `p${n}` }], nextCursor: String(n + 1) };
        },
      },
    } as unknown as McpSession;
    const call = runUtilityTool(session, "list_prompts", {}, 500, undefined, () => t);
    await expect(call).rejects.toSatisfy(
      (err) => err instanceof McpError && err.code === ErrorCode.RequestTimeout,
    );
    // 500 ms in all: 500, then 300, then 100 left; the fourth page is never asked for.
    expect(timeouts).toEqual([500, 300, 100]);
  });
});

describe("a paged utility list across a step of the system clock", () => {
  it("a clock set back (NTP) between pages does not give the next page the hours of the step", async () => {
    const timeouts: number[] = [];
    const session = {
      client: {
        request: async (
          request: { method: string; params: { cursor?: string } },
          _schema: unknown,
          options: { timeout: number },
        ) => {
          timeouts.push(options.timeout);
          vi.setSystemTime(Date.now() - 3_600_000);
          const n = Number(request.params.cursor ?? 0);
          return { prompts: [{ name: `p${n}` }], ...(n < 1 ? { nextCursor: String(n + 1) } : {}) };
        },
      },
    } as unknown as McpSession;
    vi.useFakeTimers({ toFake: ["Date", "performance"] });
    try {
      await runUtilityTool(session, "list_prompts", {}, 500);
    } finally {
      vi.useRealTimers();
    }
    expect(timeouts).toHaveLength(2);
    for (const timeout of timeouts) expect(timeout).toBeLessThanOrEqual(500);
  });
});

describe("list_resources under timeout", () => {
  /** resources/list answers at once; each resources/templates/list page takes 200 ms of the fake clock. */
  const slowTemplates = (clock: { t: number }, templatesAnswer?: () => never) =>
    ({
      client: {
        request: async (
          request: { method: string; params: { cursor?: string } },
          _schema: unknown,
          options: { timeout: number },
        ) => {
          if (request.method === "resources/list")
            return { resources: [{ uri: "note://readme", name: "readme" }] };
          expect(request.method).toBe("resources/templates/list");
          expect(options.timeout).toBeGreaterThan(0);
          templatesAnswer?.();
          clock.t += 200;
          const n = Number(request.params.cursor ?? 0);
          return {
            resourceTemplates: [{ uriTemplate: `note://${n}/{id}`, name: `t${n}` }],
            nextCursor: String(n + 1),
          };
        },
      },
    }) as unknown as McpSession;

  it("fails as a timeout when the templates' pages spend it, not answering with no templates", async () => {
    const clock = { t: 0 };
    const call = runUtilityTool(slowTemplates(clock), "list_resources", {}, 500, undefined, () => clock.t);
    await expect(call).rejects.toSatisfy(
      (err) => err instanceof McpError && err.code === ErrorCode.RequestTimeout,
    );
  });

  it("answers no templates for a server that has none (templates/list refused with -32601)", async () => {
    const clock = { t: 0 };
    const session = slowTemplates(clock, () => {
      throw new McpError(ErrorCode.MethodNotFound, "Method not found");
    });
    const result = await runUtilityTool(session, "list_resources", {}, 500, undefined, () => clock.t);
    expect(result.content).toEqual([
      {
        type: "text",
        text: JSON.stringify(
          { resources: [{ uri: "note://readme", name: "readme" }], resourceTemplates: [] },
          null,
          2,
        ),
      },
    ]);
  });
});
