import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  RECORDER_AGENT,
  recorderAgent,
  startTestGateway,
  type TestGateway,
  waitForRun,
  webhookConfig,
} from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * Spec 2.4: a script that times out is ignored (reason script). The timeout holds for the script's whole
 * process tree: a shell script whose child (`sleep`) outlives the killed shell still holds the output pipe,
 * and the answer must not wait for that child. Children a finished script left running are ended too.
 * The children sleep far longer than a test may run: an answer that waited for them would never come in
 * time, so the answer arriving at all proves it did not wait.
 */
const OPEN = "INSECURE_NO_AUTH";
let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({
    files: {
      "agent/recorder.sh": RECORDER_AGENT,
      "scripts/slow.sh": 'cat >/dev/null\nsleep 600\necho \'{"title": "late"}\'\n',
      "scripts/leaves-child.sh": 'cat >/dev/null\nsleep 600 &\necho \'{"title": "done"}\'\n',
    },
    config: webhookConfig(
      {
        slow: { secret: OPEN, script: "slow.sh", prompt: "{title}" },
        leaves: { secret: OPEN, script: "leaves-child.sh", prompt: "{title}" },
      },
      { rate_limit: 1000, script_timeout_seconds: 1 },
      { agent: recorderAgent() },
    ),
  });
});
afterAll(() => gw.stop());

describe("script timeout covers the script's children (spec 2.4)", () => {
  it("a timed-out script whose child still runs is answered ignored/script at the timeout, not when the child ends", async () => {
    const res = await postJson(gw.url("/webhooks/slow"), {});
    expect(res).toMatchObject({ status: 200, body: { status: "ignored", reason: "script" } });
  }, 30_000);

  it("a script that exits but leaves a background child holding its output: its output is used at once", async () => {
    const res = await postJson(gw.url("/webhooks/leaves"), {});
    expect(res).toMatchObject({ status: 202, body: { status: "accepted" } });
    expect((await waitForRun(gw, res.body.delivery_id as string)).prompt).toBe("done");
  }, 30_000);
});
