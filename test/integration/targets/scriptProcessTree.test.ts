import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  RECORDER_AGENT,
  recorderAgent,
  startTestGateway,
  type TestGateway,
  waitForRun,
  webhookConfig,
} from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { pidInFile, signalProcess } from "../../helpers/process.js";

/**
 * Spec 2.4: a script that times out is ignored (reason script). The timeout holds for the script's whole
 * process tree: a shell script whose child (`sleep`) outlives the killed shell still holds the output pipe,
 * and the answer must not wait for that child. Children a finished script left running are ended too, and
 * one it moved out of its group (setsid, a daemon starting), which no group kill reaches, is not waited for.
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
      // A TERM trap, as a script that cleans up sets: bash runs it only once its foreground child has ended.
      "scripts/trap.sh":
        "cat >/dev/null\ntrap 'echo trapped > trapped.txt; exit 0' TERM\nsleep 600\necho '{\"title\": \"late\"}'\n",
      "scripts/leaves-child.sh": 'cat >/dev/null\nsleep 600 &\necho \'{"title": "done"}\'\n',
      // The child leaves the group (setsid) and notes its pid once it has, keeping the output pipe open.
      "scripts/leaves-session.sh":
        "cat >/dev/null\nsetsid sh -c 'echo $$ > escaped.pid; exec sleep 600' &\nwhile [ ! -s escaped.pid ]; do sleep 0.05; done\necho '{\"title\": \"detached\"}'\n",
    },
    config: webhookConfig(
      {
        slow: { secret: OPEN, script: "slow.sh", prompt: "{title}" },
        trap: { secret: OPEN, script: "trap.sh", prompt: "{title}" },
        leaves: { secret: OPEN, script: "leaves-child.sh", prompt: "{title}" },
        session: { secret: OPEN, script: "leaves-session.sh", prompt: "{title}" },
      },
      // 3 s, not 1: the scripts that finish (leaves-child, leaves-session: three processes started) must do so
      // within it, which on a loaded machine can take longer than a second; the others sleep 600 s.
      { rate_limit: 1000, script_timeout_seconds: 3 },
      { agent: recorderAgent() },
    ),
  });
});
afterAll(async () => {
  const pidFile = join(gw.home.dir, "scripts", "escaped.pid");
  if (existsSync(pidFile)) signalProcess(await pidInFile(pidFile), "SIGKILL");
  await gw.stop();
});

describe("script timeout covers the script's children (spec 2.4)", () => {
  it("a timed-out script whose child still runs is answered ignored/script at the timeout, not when the child ends", async () => {
    const res = await postJson(gw.url("/webhooks/slow"), {});
    expect(res).toMatchObject({ status: 200, body: { status: "ignored", reason: "script" } });
  }, 30_000);

  it("the timeout sends SIGTERM to the whole group: a shell's TERM trap runs (its foreground child ends too), and the event is ignored as timed out", async () => {
    // Before, only the shell got SIGTERM; waiting on `sleep 600` it never ran its trap, and was killed
    // (SIGKILL) 2 s later with its child, the answer waiting for that.
    const res = await postJson(gw.url("/webhooks/trap"), {});
    expect(res).toMatchObject({ status: 200, body: { status: "ignored", reason: "script" } });
    await vi.waitFor(
      () => expect(readFileSync(join(gw.home.dir, "scripts", "trapped.txt"), "utf8")).toBe("trapped\n"),
      { timeout: 10_000 },
    );
    // (bash reports its child's end on stderr: "Terminated", kept in the line.)
    expect(
      gw
        .logs()
        .some((l) =>
          l.msg.startsWith(
            "[webhook] trap: script ignored the event (timed out: it ran longer than script_timeout_seconds (3 s)",
          ),
        ),
    ).toBe(true);
  }, 30_000);

  it("a script that exits but leaves a background child holding its output: its output is used at once", async () => {
    const res = await postJson(gw.url("/webhooks/leaves"), {});
    expect(res).toMatchObject({ status: 202, body: { status: "accepted" } });
    expect((await waitForRun(gw, res.body.delivery_id as string)).prompt).toBe("done");
  }, 30_000);

  it("a script that exits leaving a process out of its group (setsid) holding its output: its output is used at once", async () => {
    // Before, the answer waited for that process to close the pipe (here 600 s): the event was ignored as
    // timed out though the script had exited 0 with its object.
    const res = await postJson(gw.url("/webhooks/session"), {});
    expect(res).toMatchObject({ status: 202, body: { status: "accepted" } });
    expect((await waitForRun(gw, res.body.delivery_id as string)).prompt).toBe("detached");
  }, 30_000);
});
