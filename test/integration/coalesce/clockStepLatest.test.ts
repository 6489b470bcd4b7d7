import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { coalesceNote } from "../../../src/actors/coalescer.js";
import {
  RECORDER_AGENT,
  recorderAgent,
  startTestGateway,
  waitForRun,
  webhookConfig,
} from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

const OPEN = "INSECURE_NO_AUTH";

/**
 * "New event replaces the pending one": the latest is the one received last, told apart on a clock that
 * is never set. The system clock set back (NTP) between two events of a group does not make the newer
 * one look older, so the run uses it, not the one before the step.
 */
describe("coalescing across a step of the system clock", { timeout: 30_000 }, () => {
  it("an event received after the clock was set back replaces the pending one", async () => {
    const gw = await startTestGateway({
      fakeTimers: true,
      files: { "agent/recorder.sh": RECORDER_AGENT },
      config: webhookConfig(
        { gh: { secret: OPEN, prompt: "rev {rev}", coalesce: { key: "pr", window_seconds: 30 } } },
        { rate_limit: 1000 },
        { agent: recorderAgent() },
      ),
    });
    try {
      const send = (id: string, rev: number) =>
        postJson(gw.url("/webhooks/gh"), { pr: 7, rev }, { "x-request-id": id });
      expect((await send("before", 1)).status).toBe(202);
      gw.clock.advance(1000);
      gw.clock.step(-3_600_000);
      expect((await send("after", 2)).status).toBe(202);
      gw.clock.advance(30_000);
      expect((await waitForRun(gw, "after")).prompt).toBe(`${coalesceNote(1)}\n\nrev 2`);
      expect(readdirSync(join(gw.home.dir, "runs")).filter((f) => f.endsWith(".json"))).toEqual([
        "after.json",
      ]);
    } finally {
      await gw.stop();
    }
  });
});
