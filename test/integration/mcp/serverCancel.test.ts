import type { ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { stdioEntry, text, useHubs } from "./harness.js";

const ctx = useHubs();

/** A promise and the function that settles it, for a handler to say it was reached or ended. */
function signalled<T = void>(): { promise: Promise<T>; settle: (value: T) => void } {
  let settle: (value: T) => void = () => undefined;
  const promise = new Promise<T>((resolve) => {
    settle = resolve;
  });
  return { promise, settle };
}

/**
 * A server cancels (notifications/cancelled) the first request it sent, request id 0: an SDK server numbers
 * its requests from 0, and the SDK's client skipped a cancel of id 0, so the model run or the form went on
 * until its own timeout. The calls run side by side (`supports_parallel_tool_calls`) so that one cancels the other's request.
 */
describe("a server cancelling its first request", () => {
  it("ends the sampling run it asked for, naming the cancel", async () => {
    const asked = signalled();
    const ended = signalled<unknown>();
    const h = ctx.hub(
      ctx.home,
      {
        fx: stdioEntry(
          "legacy",
          { sampling: { enabled: true, timeout: 20 }, supports_parallel_tool_calls: true },
          ["--cancellable"],
        ),
      },
      {
        runner: (_request, signal) =>
          new Promise((_resolve, reject) => {
            asked.settle();
            signal.addEventListener("abort", () => {
              ended.settle(signal.reason);
              reject(signal.reason);
            });
          }),
      },
    );
    const call = h.call("fx", "sample-to-cancel", {});
    await asked.promise;
    expect(text(await h.call("fx", "cancel-requests", {}))).toBe("cancelled 1");
    // Without the cancel, the run would end only at sampling.timeout, for that reason.
    expect(((await ended.promise) as Error).message).toBe(
      "mcp_servers.fx canceled its sampling request, or its connection closed",
    );
    expect(text(await call)).toMatch(/^cancelled: .*changed its mind$/);
  }, 15_000);

  it("ends the form it put to the approval surface", async () => {
    const asked = signalled();
    const ended = signalled<boolean>();
    const h = ctx.hub(
      ctx.home,
      { fx: stdioEntry("legacy", { supports_parallel_tool_calls: true }, ["--cancellable"]) },
      {
        approvals: {
          approve: async () => false,
          elicit: (_request, signal) =>
            new Promise<ElicitResult>((resolve) => {
              asked.settle();
              signal.addEventListener("abort", () => {
                ended.settle(true);
                resolve({ action: "cancel" });
              });
            }),
        },
      },
    );
    const call = h.call("fx", "ask-to-cancel", {});
    await asked.promise;
    expect(text(await h.call("fx", "cancel-requests", {}))).toBe("cancelled 1");
    // elicitation.timeout is 300 s: the test's own timeout fails it when the cancel is skipped.
    expect(await ended.promise).toBe(true);
    expect(text(await call)).toMatch(/^cancelled: .*changed its mind$/);
  }, 15_000);
});
