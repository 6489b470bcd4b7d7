import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { coalesceNote } from "../../../src/actors/coalescer.js";
import type { Gateway } from "../../../src/gateway/index.js";
import { appendedRuns } from "../../helpers/appendAgent.js";
import { inHome, startGatewayInHome, webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";

/**
 * docs/webhook.md, SIGINT/SIGTERM: the pending-runs file is first written when the stop begins, so a
 * supervisor that kills the gateway before the drain is over (`docker stop`: SIGKILL after 10 s) loses
 * no accepted run. A request still in the pipeline (a script runs up to script_timeout_seconds) must not
 * hold that first save back.
 */

const OPEN = "INSECURE_NO_AUTH";
// One run slot, held until `go` exists; each finished run appends its delivery id to runs.log.
const GATED = `while [ -d "$0" ] && [ ! -e "$0/go" ]; do sleep 0.05; done; printf "%s\\n" "$SVC_DELIVERY_ID" >> "$0/runs.log"`;
// A route script that passes the payload on; one marked `hold` (it leaves `holding.<pid>` while it
// waits) only once the test creates `release-script`.
const GATE_SCRIPT = `payload="$(cat)"
case "$payload" in *hold*) : > "$(dirname "$0")/../holding.$$"; while [ ! -e "$(dirname "$0")/../release-script" ]; do sleep 0.05; done;; esac
printf '%s' "$payload"
`;

const homes: TempHome[] = [];
const running: Gateway[] = [];
afterEach(async () => {
  for (const home of homes) home.write("release-script", "");
  for (const gateway of running.splice(0)) await gateway.stop();
  for (const home of homes.splice(0)) home.cleanup();
});

const savedRuns = (home: TempHome): Array<{ deliveryId: string; prompt: string }> => {
  const file = join(home.dir, "webhook-pending-runs.json");
  if (!existsSync(file)) return [];
  return (JSON.parse(readFileSync(file, "utf8")) as { runs: Array<{ deliveryId: string; prompt: string }> })
    .runs;
};
const savedIds = (home: TempHome): string[] =>
  savedRuns(home)
    .map((run) => run.deliveryId)
    .sort();

describe("stop while a request is still in the pipeline (a slow route script)", { timeout: 20_000 }, () => {
  it("the accepted runs, the pending group and the seen ids are saved at once, not after the script; the events still in flight are added (one still joins its group) and each runs once after a restart", async () => {
    const home = tempHome();
    homes.push(home);
    home.write("scripts/gate.sh", GATE_SCRIPT, 0o755);
    home.write(
      "config.yaml",
      stringify(
        webhookConfig(
          {
            pr: { secret: OPEN },
            slow: { secret: OPEN, script: "gate.sh" },
            grouped: {
              secret: OPEN,
              script: "gate.sh",
              prompt: "rev {rev}",
              coalesce: { key: "n", window_seconds: 60 },
            },
          },
          { rate_limit: 1000 },
          {
            agent: { provider: "command", command: ["sh", "-c", GATED, inHome("")], max_concurrent_runs: 1 },
          },
        ),
      ),
    );
    const gw = await startGatewayInHome(home, 300);
    const send = (route: string, id: string, payload: Record<string, unknown> = { n: 1 }) =>
      postJson(`http://127.0.0.1:${gw.port}/webhooks/${route}`, payload, { "X-Request-ID": id });
    expect((await send("pr", "a1")).status).toBe(202);
    expect((await send("pr", "a2")).status).toBe(202);
    expect((await send("grouped", "c1", { n: 1, rev: 1 })).body).toEqual({ status: "coalesced" });
    const inFlight = send("slow", "s1", { hold: true });
    const inFlightGrouped = send("grouped", "c2", { n: 1, rev: 2, hold: true });
    // The scripts have both requests once the stop begins (they block until released).
    await vi.waitFor(
      () => expect(readdirSync(home.dir).filter((name) => name.startsWith("holding."))).toHaveLength(2),
      { timeout: 10_000, interval: 20 },
    );

    const stopped = gw.stop();
    // "At once" is before the release below (the scripts hold the stop until then): the wait may be long.
    await vi.waitFor(() => expect(savedIds(home)).toEqual(["a1", "a2", "c1"]), {
      timeout: 10_000,
      interval: 20,
    });
    const seen = JSON.parse(readFileSync(join(home.dir, "webhook-seen-ids.json"), "utf8")) as {
      ids: Array<[string, number]>;
    };
    expect(seen.ids.map(([key]) => key).sort()).toEqual(["grouped:c1", "pr:a1", "pr:a2"]);

    home.write("release-script", "");
    expect((await inFlight).body).toMatchObject({ status: "accepted", delivery_id: "s1" });
    // Spec 3.1: the late event still replaces the pending one; the group fires once, at the stop.
    expect((await inFlightGrouped).body).toEqual({ status: "coalesced" });
    await stopped;
    // Nothing ran (the slot is held): every accepted event is saved, the in-flight ones included.
    expect(savedIds(home)).toEqual(["a1", "a2", "c2", "s1"]);
    expect(savedRuns(home).find((run) => run.deliveryId === "c2")?.prompt).toBe(
      `${coalesceNote(1)}\n\nrev 2`,
    );
    expect(appendedRuns(home.dir).size).toBe(0);

    home.write("go", "");
    const second = await startGatewayInHome(home, 5000);
    running.push(second);
    await vi.waitFor(() => expect(appendedRuns(home.dir).size).toBe(4), { timeout: 10_000, interval: 50 });
    await second.stop();
    running.splice(0);
    expect(Object.fromEntries(appendedRuns(home.dir))).toEqual({ a1: 1, a2: 1, c2: 1, s1: 1 });
    expect(savedIds(home)).toEqual([]);
  });
});
