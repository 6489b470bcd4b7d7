import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
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
