import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import {
  gatewayPerTest,
  RECORDER_AGENT,
  readRun,
  recorderAgent,
  waitForRun,
  webhookConfig,
} from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { runInProcess } from "../../helpers/inProcessCli.js";

const perTest = gatewayPerTest();

/** A script that says it started, then holds the event until the test writes `release` (the payload passes as is). */
const HOLDING_SCRIPT =
  'd="$(dirname "$0")/.."; touch "$d/started"; while [ ! -e "$d/release" ]; do sleep 0.02; done; cat\n';

const config = (windowSeconds: number) =>
  webhookConfig(
    {
      gh: {
        secret: "INSECURE_NO_AUTH",
        script: "hold.sh",
        prompt: "pr {pull_request.number}",
        coalesce: { key: "pull_request.number", window_seconds: windowSeconds, max_wait_seconds: 900 },
      },
    },
    { rate_limit: 1000 },
    { agent: recorderAgent() },
  );

describe("a reload while an event of a coalescing route is in its script", { timeout: 60_000 }, () => {
  it("the event is not grouped under the replaced route (its group kept the old 600 s window past the reload, and took the next events in): it runs at once, as the reload's flush would have run it", async () => {
    const gw = await perTest.start({
      fakeTimers: true,
      files: { "agent/recorder.sh": RECORDER_AGENT, "scripts/hold.sh": HOLDING_SCRIPT },
      config: config(600),
    });
    const first = postJson(
      gw.url("/webhooks/gh"),
      { pull_request: { number: 7 } },
      { "x-forge-delivery": "a1" },
    );
    await vi.waitFor(() => expect(existsSync(join(gw.home.dir, "started"))).toBe(true), { timeout: 10_000 });
    // The reload shortens the window; the event in the script passed the route lookup before it.
    gw.home.write("config.yaml", stringify(config(1)), 0o600);
    gw.gateway.reload();
    writeFileSync(join(gw.home.dir, "release"), "");
    expect((await first).body).toMatchObject({ status: "accepted", delivery_id: "a1" });
    expect((await waitForRun(gw, "a1")).prompt).toBe("pr 7");
    // The next event of that key opens a group of the reloaded route: 1 s, not 600 s.
    const next = await postJson(
      gw.url("/webhooks/gh"),
      { pull_request: { number: 7 } },
      { "x-forge-delivery": "b1" },
    );
    expect(next.body).toEqual({ status: "coalesced" });
    expect(readRun(gw.home, "b1")).toBeUndefined();
    gw.clock.advance(1000);
    expect((await waitForRun(gw, "b1")).prompt).toBe("pr 7");
  });

  it.each([
    ["fired before the reload", 1],
    ["fired by the reload's flush", 600],
  ])(
    "an event in its script at the reload, received before the event a group of its key dispatched (%s), is superseded by that run: answered coalesced, never run after it with the stale payload",
    async (_title, windowSeconds) => {
      /** Holds only an event whose payload says `"hold":true`, until the test writes `release`. */
      const holdOne = [
        'd="$(dirname "$0")/.."; p="$(cat)"',
        `case "$p" in *'"hold":true'*) touch "$d/started"; while [ ! -e "$d/release" ]; do sleep 0.02; done;; esac`,
        "printf '%s' \"$p\"",
        "",
      ].join("\n");
      const gw = await perTest.start({
        fakeTimers: true,
        files: { "agent/recorder.sh": RECORDER_AGENT, "scripts/hold.sh": holdOne },
        config: config(windowSeconds),
      });
      const url = gw.url("/webhooks/gh");
      const first = postJson(url, { pull_request: { number: 3 }, hold: true }, { "x-forge-delivery": "old" });
      await vi.waitFor(() => expect(existsSync(join(gw.home.dir, "started"))).toBe(true), {
        timeout: 10_000,
      });
      gw.clock.advance(100);
      expect(
        (await postJson(url, { pull_request: { number: 3 } }, { "x-forge-delivery": "new" })).body,
      ).toEqual({
        status: "coalesced",
      });
      if (windowSeconds === 1) gw.clock.advance(1_000);
      gw.home.write("config.yaml", stringify(config(1)), 0o600);
      gw.gateway.reload();
      expect((await waitForRun(gw, "new")).prompt).toBe("pr 3");
      writeFileSync(join(gw.home.dir, "release"), "");
      expect((await first).body).toEqual({ status: "coalesced" });
      const superseded = gw.logs().find((l) => l.msg.includes("superseded by a run already dispatched"));
      expect(superseded).toMatchObject({ delivery_id: "old", superseded_by: "new" });
      gw.clock.advance(5_000);
      expect(readRun(gw.home, "old")).toBeUndefined();
      // The key's next group counts it.
      expect(
        (await postJson(url, { pull_request: { number: 3 } }, { "x-forge-delivery": "next" })).body,
      ).toEqual({
        status: "coalesced",
      });
      gw.clock.advance(1_000);
      expect((await waitForRun(gw, "next")).prompt).toBe(
        "[Coalesced: this run covers 2 events; 1 earlier event for this key was superseded]\n\npr 3",
      );
      expect(readRun(gw.home, "old")).toBeUndefined();
      // The delivery history says it was superseded by that run, not that it joined a group.
      await vi.waitFor(
        async () => {
          const listed = await runInProcess(["webhook", "deliveries", "gh"], {
            SVC_HOME: gw.home.dir,
            PATH: process.env.PATH ?? "",
          });
          const row = listed.stdout.split("\n").find((line) => /\sold\s/.test(line));
          expect(row).toMatch(/\s202 coalesced\s+-\s+-\s+superseded by a run already dispatched \(new\): /);
        },
        { timeout: 10_000, interval: 100 },
      );
    },
  );

  it("a dynamic subscription's event in its script at the reload runs at once too (it was grouped after the reload's flush and waited for a new window)", async () => {
    const subscription = JSON.stringify({
      sl: {
        secret: "INSECURE_NO_AUTH",
        script: "hold.sh",
        prompt: "sl {id}",
        enabled: true,
        coalesce: { key: "id", window_seconds: 3 },
      },
    });
    const gw = await perTest.start({
      fakeTimers: true,
      files: {
        "agent/recorder.sh": RECORDER_AGENT,
        "scripts/hold.sh": HOLDING_SCRIPT,
        "webhook_subscriptions.json": subscription,
      },
      config: webhookConfig({}, { rate_limit: 1000 }, { agent: recorderAgent() }),
    });
    const held = postJson(gw.url("/webhooks/sl"), { id: 4 }, { "x-request-id": "f1" });
    await vi.waitFor(() => expect(existsSync(join(gw.home.dir, "started"))).toBe(true), { timeout: 10_000 });
    gw.gateway.reload();
    writeFileSync(join(gw.home.dir, "release"), "");
    expect((await held).body).toMatchObject({ status: "accepted", delivery_id: "f1" });
    // No window was moved: the run came of the answer alone.
    expect((await waitForRun(gw, "f1")).prompt).toBe("sl 4");
    expect(gw.logs().filter((l) => l.msg.includes("coalesced group dispatched"))).toEqual([]);
  });
});
