import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { type Foreground, killIfRunning, runForeground, svc } from "../cli/svc.js";
import { agentsAlive, deliver, liveOnDisk, openGate, ranLines, SECRET, writeConfig } from "./killHelpers.js";

/**
 * docs/coalescing-and-cron.md: a coalescing group of a subscription disabled while the gateway was down
 * (kill -9) is held at the next start; enabled again without `coalesce`, the subscription's first event
 * has the held group run first, and the newer event after it — not the older event at a later start.
 */

const homes: TempHome[] = [];
const gateways: Foreground[] = [];
afterEach(async () => {
  for (const gateway of gateways.splice(0)) await killIfRunning(gateway);
  for (const home of homes.splice(0)) home.cleanup();
});

async function start(home: TempHome): Promise<Foreground> {
  const gateway = await runForeground(home);
  gateways.push(gateway);
  return gateway;
}

/** Changes subscription `name` in webhook_subscriptions.json, as an operator editing the file does. */
function editSubscription(home: TempHome, name: string, edit: (record: Record<string, unknown>) => void) {
  const file = join(home.dir, "webhook_subscriptions.json");
  const all = JSON.parse(readFileSync(file, "utf8")) as Record<string, Record<string, unknown>>;
  edit(all[name] as Record<string, unknown>);
  writeFileSync(file, JSON.stringify(all));
}

describe("a group held at start whose subscription comes back without coalesce", { timeout: 60_000 }, () => {
  it("runs before the subscription's first event since, never after it", async () => {
    const home = tempHome();
    homes.push(home);
    // One slot, gated: runs.log lists the runs in the order they were queued.
    writeConfig(home, {}, 1);
    expect((await svc(home, ["webhook", "subscribe", "s1", "--secret", SECRET])).code).toBe(0);
    editSubscription(home, "s1", (record) => {
      record.coalesce = { key: "k", window_seconds: 20, max_wait_seconds: 60 };
    });
    const first = await start(home);
    expect(await deliver(first.port, "s1", "rev-1", { k: "a" })).toMatchObject({
      status: 202,
      body: { status: "coalesced" },
    });
    first.child.kill("SIGKILL");
    await first.exited;
    expect((await svc(home, ["webhook", "disable", "s1"])).code).toBe(0);
    const second = await start(home);
    await vi.waitFor(() => expect(second.stdout()).toContain("1 pending coalescing group(s) not resumed"), {
      timeout: 10_000,
    });
    editSubscription(home, "s1", (record) => {
      delete record.coalesce;
      record.enabled = true;
    });
    await vi.waitFor(
      async () =>
        expect(await deliver(second.port, "s1", "rev-2", { k: "a" })).toMatchObject({ status: 202 }),
      { timeout: 10_000, interval: 100 },
    );
    openGate(home);
    await vi.waitFor(() => expect(ranLines(home).map(([id]) => id)).toEqual(["rev-1", "rev-2"]), {
      timeout: 20_000,
      interval: 50,
    });
    expect(liveOnDisk(home).groups.size).toBe(0);
    // A run killed before its end is on record runs again (at least once): wait for both ends.
    await vi.waitFor(() => expect(liveOnDisk(home).runs.size).toBe(0), { timeout: 10_000, interval: 50 });
    second.child.kill("SIGKILL");
    await second.exited;
    await vi.waitFor(() => expect(agentsAlive(home)).toBe(0), { timeout: 15_000, interval: 20 });
    // Nothing is left to run at the next start: the older event does not run again after the newer one.
    const third = await start(home);
    await vi.waitFor(() => expect(third.stdout()).toContain("Listening on"), { timeout: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(ranLines(home).map(([id]) => id)).toEqual(["rev-1", "rev-2"]);
  });
});
