import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { inHome, startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { HOLD_SCRIPT } from "../../helpers/holdScript.js";
import { postJson } from "../../helpers/http.js";

/**
 * An event a reload retired in its coalescing route's script, run at once, is remembered by its key only
 * once the run queue has taken its run: one answered 503 (the queue full) supersedes no older event of
 * its key, which runs instead of being answered coalesced and never run.
 */

/**
 * Writes each run's prompt to `runs/<delivery id>`; a run of route `plain` then waits until the test writes
 * `release` in the home (or the home is gone).
 */
const AGENT = [
  'home="$(dirname "$0")/.."; mkdir -p "$home/runs"; p="$(cat)"',
  'printf \'%s\' "$p" > "$home/runs/.$SVC_DELIVERY_ID"; mv "$home/runs/.$SVC_DELIVERY_ID" "$home/runs/$SVC_DELIVERY_ID"',
  'while [ "$SVC_ROUTE" = plain ] && [ -d "$home/agent" ] && [ ! -e "$home/release" ]; do sleep 0.05; done',
  "printf done",
  "",
].join("\n");

/** Polls up to 15 s: scripts and agent processes take their time on a loaded machine. */
const SLOW = { timeout: 15_000, interval: 20 };

describe("a retired event of a coalescing route answered 503 (run queue full)", { timeout: 60_000 }, () => {
  let gw: TestGateway | undefined;
  afterEach(async () => {
    if (gw === undefined) return;
    for (const gate of ["release", "release-a", "release-b"]) gw.home.write(gate, "");
    await gw.stop();
    gw = undefined;
  });

  it("supersedes nothing: the older event of its key, through after it, runs; the newer one's retry runs after it", async () => {
    const g = await startTestGateway({
      runQueueCap: 1,
      fakeTimers: true,
      files: { "agent/agent.sh": AGENT, "scripts/hold.sh": HOLD_SCRIPT },
      config: webhookConfig(
        {
          plain: { secret: "INSECURE_NO_AUTH", prompt: "p" },
          sl: {
            secret: "INSECURE_NO_AUTH",
            script: "hold.sh",
            prompt: "sl {v}",
            coalesce: { key: "id", window_seconds: 5 },
          },
        },
        { rate_limit: 1000 },
        {
          agent: { provider: "command", command: ["bash", inHome("agent/agent.sh")], max_concurrent_runs: 1 },
        },
      ),
    });
    gw = g;
    const dir = g.home.dir;
    const url = (route: string) => g.url(`/webhooks/${route}`);
    const prompt = (id: string) => {
      const path = join(dir, "runs", id);
      return existsSync(path) ? readFileSync(path, "utf8") : undefined;
    };

    // P1 holds the one run slot, P2 waits: the run queue (cap 1) is full.
    expect((await postJson(url("plain"), { n: 1 }, { "x-request-id": "P1" })).status).toBe(202);
    await vi.waitFor(() => expect(prompt("P1")).toBe("p"), SLOW);
    expect((await postJson(url("plain"), { n: 2 }, { "x-request-id": "P2" })).status).toBe(202);

    // A, then B (300 ms later) of key 7 in the script when the reload retires the route.
    const older = postJson(url("sl"), { id: 7, v: "A-old", hold: "a" }, { "x-request-id": "R1A" });
    await vi.waitFor(() => expect(existsSync(join(dir, "started-a"))).toBe(true), SLOW);
    g.clock.advance(300);
    const newer = postJson(url("sl"), { id: 7, v: "B-new", hold: "b" }, { "x-request-id": "R1B" });
    await vi.waitFor(() => expect(existsSync(join(dir, "started-b"))).toBe(true), SLOW);
    g.gateway.reload();

    // B, through first, runs at once: the queue is full, so it is refused and its sender retries it.
    g.home.write("release-b", "");
    const refused = await newer;
    expect(refused.status).toBe(503);
    expect(JSON.stringify(refused.body)).toContain("Agent run queue is full");

    // The queue empties (P1 ends, P2 takes the slot and ends); A, through now, was not superseded by a run
    // that was never made: it runs.
    g.home.write("release", "");
    await vi.waitFor(() => expect(prompt("P2")).toBe("p"), SLOW);
    g.home.write("release-a", "");
    expect((await older).body).toMatchObject({ status: "accepted", delivery_id: "R1A" });
    await vi.waitFor(() => expect(prompt("R1A")).toBe("sl A-old"), SLOW);
    expect(g.logs().map((l) => l.msg)).not.toContainEqual(expect.stringContaining("superseded by a run"));

    // B's retry (the reloaded route's) is not superseded by A's run either: it opens a group, which runs B-new.
    expect((await postJson(url("sl"), { id: 7, v: "B-new" }, { "x-request-id": "R1B" })).body).toEqual({
      status: "coalesced",
    });
    g.clock.advance(5_000);
    await vi.waitFor(() => expect(prompt("R1B")).toBe("sl B-new"), SLOW);
  });
});
