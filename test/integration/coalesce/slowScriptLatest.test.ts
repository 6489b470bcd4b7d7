import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import {
  gatewayPerTest,
  RECORDER_AGENT,
  readRun,
  recorderAgent,
  waitForRun,
  webhookConfig,
} from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * docs/coalescing-and-cron.md: the latest event of a key is the one received last. An event whose script is
 * slower than a newer event's, and whose newer event's group fired meanwhile, was superseded by that run: it
 * must not run after it (the agent would act last on the stale payload).
 */

const perTest = gatewayPerTest();

/** Holds an event whose payload says `"hold":true` until the test writes `release`; passes the payload on as is. */
const SLOW_SCRIPT = [
  'd="$(dirname "$0")/.."; p="$(cat)"',
  `case "$p" in *'"hold":true'*) touch "$d/started"; while [ ! -e "$d/release" ]; do sleep 0.02; done;; esac`,
  "printf '%s' \"$p\"",
  "",
].join("\n");

const CONFIG = webhookConfig(
  {
    sl: {
      secret: "INSECURE_NO_AUTH",
      script: "slow.sh",
      prompt: "sl {v}",
      coalesce: { key: "id", window_seconds: 1 },
    },
  },
  { rate_limit: 1000 },
  { agent: recorderAgent() },
);

describe("an event received first whose script ends after a newer event's group fired", {
  timeout: 60_000,
}, () => {
  it("is answered coalesced, does not run after the newer event (it ran alone, last, with the stale payload), and the key's next group counts it superseded; its id stays a duplicate after a restart", async () => {
    const gw = await perTest.start({
      fakeTimers: true,
      files: { "agent/recorder.sh": RECORDER_AGENT, "scripts/slow.sh": SLOW_SCRIPT },
      config: CONFIG,
    });
    const url = gw.url("/webhooks/sl");
    const first = postJson(url, { id: 1, v: "A-first", hold: true }, { "x-request-id": "slA" });
    await vi.waitFor(() => expect(existsSync(join(gw.home.dir, "started"))).toBe(true), { timeout: 10_000 });
    gw.clock.advance(300);
    expect((await postJson(url, { id: 1, v: "B-second" }, { "x-request-id": "slB" })).body).toEqual({
      status: "coalesced",
    });
    gw.clock.advance(1_000);
    expect((await waitForRun(gw, "slB")).prompt).toBe("sl B-second");
    writeFileSync(join(gw.home.dir, "release"), "");
    expect((await first).body).toEqual({ status: "coalesced" });
    const superseded = gw.logs().find((l) => l.msg.includes("superseded by a run already dispatched"));
    expect(superseded).toMatchObject({ delivery_id: "slA", superseded_by: "slB" });
    gw.clock.advance(5_000);
    expect(readRun(gw.home, "slA")).toBeUndefined();
    // The key's next event opens a group; its run counts A among the events it supersedes.
    gw.clock.advance(1_000);
    expect((await postJson(url, { id: 1, v: "C-third" }, { "x-request-id": "slC" })).body).toEqual({
      status: "coalesced",
    });
    gw.clock.advance(1_000);
    expect((await waitForRun(gw, "slC")).prompt).toBe(
      "[Coalesced: this run covers 2 events; 1 earlier event for this key was superseded]\n\nsl C-third",
    );
    expect(
      gw
        .logs()
        .filter((l) => l.msg.includes("coalesced group dispatched"))
        .map((l) => [l.delivery_id, l.superseded]),
    ).toEqual([
      ["slB", 0],
      ["slC", 1],
    ]);
    expect(readRun(gw.home, "slA")).toBeUndefined();
    // Its id stays seen: the sender's retry after a restart is a duplicate (after a crash, from the journal:
    // test/unit/state/coalescedIdsRecorded.test.ts).
    await gw.gateway.stop();
    const again = await perTest.restart(gw);
    const retry = await postJson(
      `http://127.0.0.1:${again.port}/webhooks/sl`,
      { id: 1, v: "A-first", hold: false },
      { "x-request-id": "slA" },
    );
    expect(retry).toMatchObject({ status: 200, body: { status: "duplicate" } });
  });
});
