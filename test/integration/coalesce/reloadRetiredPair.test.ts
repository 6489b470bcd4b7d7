import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { RECORDER_AGENT, readRun, recorderAgent, webhookConfig } from "../../helpers/gateway.js";
import { HOLD_SCRIPT } from "../../helpers/holdScript.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { runInProcess } from "../../helpers/inProcessCli.js";
import { signalProcess } from "../../helpers/process.js";
import { type Foreground, killIfRunning, runForeground } from "../cli/svc.js";

/**
 * Two events of one key in a coalescing route's script at a reload (SIGHUP): the reload retires the route
 * they were resolved against, so neither is grouped after it. The newer one, through its script first, runs
 * at once; the older one, through after it, is superseded by that run (answered coalesced, never run), not
 * run after it with the older payload.
 */

const ROUTE = {
  secret: "INSECURE_NO_AUTH",
  script: "hold.sh",
  prompt: "sl {v}",
  coalesce: { key: "id", window_seconds: 5 },
};

/** Polls up to 15 s: a gateway process and its scripts take their time on a loaded machine. */
const SLOW = { timeout: 15_000, interval: 20 };

describe("a reload while two events of a coalescing route's key are in its script", {
  timeout: 60_000,
}, () => {
  let home: TempHome | undefined;
  let gateway: Foreground | undefined;
  afterEach(async () => {
    await killIfRunning(gateway);
    gateway = undefined;
    home?.cleanup();
    home = undefined;
  });

  it.each([
    ["a config.yaml route", "config"],
    ["a subscription", "subscription"],
  ] as const)(
    "%s: the newer event, through first, runs at once; the older one, through after it, is superseded by that run and never runs",
    async (_title, kind) => {
      home = tempHome();
      const agent = { agent: recorderAgent() };
      home.write(
        "config.yaml",
        stringify(webhookConfig(kind === "config" ? { sl: ROUTE } : {}, { rate_limit: 1000 }, agent)),
        0o600,
      );
      if (kind === "subscription")
        home.write("webhook_subscriptions.json", JSON.stringify({ sl: { ...ROUTE, enabled: true } }), 0o600);
      home.write("scripts/hold.sh", HOLD_SCRIPT, 0o755);
      home.write("agent/recorder.sh", RECORDER_AGENT, 0o755);
      const dir = home.dir;
      gateway = await runForeground(home, ["--port", "0"]);
      const url = `http://127.0.0.1:${gateway.port}/webhooks/sl`;
      const log = () => {
        const path = join(dir, "logs", "gateway.log");
        return existsSync(path) ? readFileSync(path, "utf8") : "";
      };

      const older = postJson(url, { id: 7, v: "A-old", hold: "a" }, { "x-request-id": "R1A" });
      await vi.waitFor(() => expect(existsSync(join(dir, "started-a"))).toBe(true), SLOW);
      const newer = postJson(url, { id: 7, v: "B-new", hold: "b" }, { "x-request-id": "R1B" });
      await vi.waitFor(() => expect(existsSync(join(dir, "started-b"))).toBe(true), SLOW);
      signalProcess(gateway.child.pid ?? 0, "SIGHUP");
      await vi.waitFor(() => expect(log()).toContain("[webhook] Reloaded"), SLOW);

      home.write("release-b", "");
      expect((await newer).body).toMatchObject({ status: "accepted", delivery_id: "R1B" });
      home.write("release-a", "");
      expect((await older).body).toEqual({ status: "coalesced" });
      await vi.waitFor(() => expect(readRun(home as TempHome, "R1B")?.prompt).toBe("sl B-new"), SLOW);
      // R1B's run was its own (the reload kept it from grouping), not a group's: said so in the log and the history.
      expect(log()).toMatch(
        /\[webhook\] sl: coalesced event superseded by a run already dispatched — it was received before that run's event \(R1B\), whose run \(its own, a reload having kept it from grouping\) was dispatched before this one was through the pipeline/,
      );
      await vi.waitFor(async () => {
        const listed = await runInProcess(["webhook", "deliveries", "sl"], {
          SVC_HOME: dir,
          PATH: process.env.PATH ?? "",
        });
        const row = listed.stdout.split("\n").find((line) => /\sR1A\s/.test(line));
        expect(row).toMatch(
          /\s202 coalesced\s+-\s+-\s+superseded by a run already dispatched \(R1B\): a run of its key had been made of an event received after this one \(that event's own run: a reload kept it from grouping\), so it joined no group and never runs$/,
        );
      }, SLOW);
      // Its answer settled it: no run of it is coming, and no group was opened that could run it later.
      expect(readRun(home, "R1A")).toBeUndefined();
      expect(log()).not.toContain("coalesced group dispatched");
    },
  );
});
