import { describe, expect, it } from "vitest";
import type { ServerStatus } from "../../../src/io/mcp/statusFile.js";
import { signalProcess } from "../../helpers/process.js";
import { stdioEntry, text, useHubs } from "./harness.js";

const ctx = useHubs();

/**
 * `sampling.max_requests_per_minute` bounds a server's sampling requests, not one session's: a server
 * whose process ends (a crash, a recycle) and is started again within the minute gets no new budget.
 */
describe("sampling rate limit across reconnects", () => {
  it("still refuses a request over the limit after the server's process was restarted", async () => {
    let lost: () => void = () => undefined;
    const reconnecting = new Promise<void>((resolve) => {
      lost = resolve;
    });
    const onStatus = (statuses: ServerStatus[]) => {
      if (statuses.some((s) => s.name === "fx" && s.state === "reconnecting")) lost();
    };
    const h = ctx.hub(
      ctx.home,
      { fx: stdioEntry("legacy", { sampling: { enabled: true, max_requests_per_minute: 1 } }) },
      { runner: async () => "sampled-answer", onStatus },
    );
    expect(text(await h.call("fx", "sample", { prompt: "first" }))).toBe("svc-agent:sampled-answer");
    const firstPid = Number(text(await h.call("fx", "pid", {})));
    signalProcess(firstPid, "SIGKILL");
    await reconnecting;
    // The next call connects a new process at once; its sampling request is the second in the minute.
    const second = await h.call("fx", "sample", { prompt: "second" });
    expect(Number(text(await h.call("fx", "pid", {})))).not.toBe(firstPid);
    expect(second.isError).toBe(true);
    expect(text(second)).toMatch(/sampling rate limit reached \(1 per minute\)/);
  });

  it("still refuses a request over the limit after a reload that changed the server's entry", async () => {
    const sampling = { enabled: true, max_requests_per_minute: 1 };
    const h = ctx.hub(
      ctx.home,
      { fx: stdioEntry("legacy", { sampling }) },
      { runner: async () => "sampled-answer" },
    );
    expect(text(await h.call("fx", "sample", { prompt: "first" }))).toBe("svc-agent:sampled-answer");
    const firstPid = Number(text(await h.call("fx", "pid", {})));
    // A key that has nothing to do with sampling: the server is replaced (a new process), not its budget.
    const summary = await h.reload({ fx: stdioEntry("legacy", { sampling, timeout: 77 }) });
    expect(summary.changed).toEqual(["fx"]);
    const second = await h.call("fx", "sample", { prompt: "second" });
    expect(Number(text(await h.call("fx", "pid", {})))).not.toBe(firstPid);
    expect(second.isError).toBe(true);
    expect(text(second)).toMatch(/sampling rate limit reached \(1 per minute\)/);
  });
});
