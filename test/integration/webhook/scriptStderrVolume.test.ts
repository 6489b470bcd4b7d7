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

const OPEN = "INSECURE_NO_AUTH";

/** Spec 2.4 judges a script by its exit code and standard output; what it logs to stderr is diagnostics. */
describe("route script stderr volume (spec 2.4)", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      files: {
        "agent/recorder.sh": RECORDER_AGENT,
        // 5 MB of debug logging on stderr (past the 4 MiB output cap), then a valid JSON object.
        "scripts/chatty.sh":
          "cat >/dev/null\nhead -c 5000000 /dev/zero | tr '\\0' d >&2\necho 'last line' >&2\necho '{\"title\": \"kept\"}'\n",
        "scripts/chatty_fail.sh":
          "cat >/dev/null\nhead -c 5000000 /dev/zero | tr '\\0' d >&2\necho >&2\necho 'boom: no repo' >&2\nexit 2\n",
        // 5 MB on stdout: past the cap, the pipe is closed on it.
        "scripts/huge.sh": "cat >/dev/null\nhead -c 5000000 /dev/zero | tr '\\0' x\n",
      },
      config: webhookConfig(
        {
          chatty: { secret: OPEN, script: "chatty.sh", prompt: "{title}" },
          chatty_fail: { secret: OPEN, script: "chatty_fail.sh", prompt: "{title}" },
          huge: { secret: OPEN, script: "huge.sh", prompt: "{title}" },
        },
        { script_timeout_seconds: 10, rate_limit: 1000 },
        { agent: recorderAgent() },
      ),
    });
  });
  afterAll(() => gw.stop());

  it("a script that exits 0 with a JSON object is used however much it wrote to stderr", async () => {
    const res = await postJson(gw.url("/webhooks/chatty"), { k: "v" });
    expect(res.status).toBe(202);
    expect((await waitForRun(gw, res.body.delivery_id as string)).prompt).toBe("kept");
  });

  it("a failing chatty script is ignored and its last stderr line is still in the log", async () => {
    const res = await postJson(gw.url("/webhooks/chatty_fail"), { k: "v" });
    expect(res).toMatchObject({ status: 200, body: { status: "ignored", reason: "script" } });
    const line = gw.logs().find((l) => l.msg.startsWith("[webhook] chatty_fail: script ignored"));
    expect(line?.msg).toContain("exited with code 2");
    expect(line?.msg).toContain("boom: no repo");
  });

  it("a script whose standard output passes 4 MiB is ignored, and the log line says so (not an exit code)", async () => {
    const res = await postJson(gw.url("/webhooks/huge"), { k: "v" });
    expect(res).toMatchObject({ status: 200, body: { status: "ignored", reason: "script" } });
    const line = gw.logs().find((l) => l.msg.startsWith("[webhook] huge: script ignored"));
    expect(line?.msg).toMatch(/^\[webhook\] huge: script ignored the event \(standard output over 4 MiB[;)]/);
  });
});
