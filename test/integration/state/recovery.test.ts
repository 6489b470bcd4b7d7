import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { type Gateway, startGateway } from "../../../src/gateway/index.js";
import { createLogger } from "../../../src/io/log.js";
import { readPendingRuns, writePendingRuns } from "../../../src/io/stores/pendingRuns.js";
import { stateDir } from "../../../src/state/gatewayState.js";
import { LocalStateStore } from "../../../src/state/localStore.js";
import { appendAgent, appendedRuns } from "../../helpers/appendAgent.js";
import { type FakeClock, fakeClock, webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { fillableDisk, recordsEnd } from "../../helpers/journal.js";
import { scrapedSample } from "../../helpers/metrics.js";
import { liveOnDisk } from "./killHelpers.js";

/**
 * docs/durability.md, recovery: what an earlier process left in the journal (written here through the
 * store, as that process would have) is picked up by the next start: pending groups fire with what is
 * left of their windows, idempotency keys answer duplicate within the hour, a damaged tail is logged.
 */

const OPEN = "INSECURE_NO_AUTH";
const homes: TempHome[] = [];
const running: Gateway[] = [];
afterEach(async () => {
  for (const gateway of running.splice(0)) await gateway.stop();
  for (const home of homes.splice(0)) home.cleanup();
});

const run = (id: string, receivedAt: number, routeName = "grouped") => ({
  profile: "default",
  routeName,
  event: undefined,
  deliveryId: id,
  prompt: `prompt ${id}`,
  extra: {},
  receivedAt,
});

function homeWith(routes: Record<string, unknown>, agent = appendAgent(2)): TempHome {
  const home = tempHome();
  homes.push(home);
  home.write("config.yaml", stringify(webhookConfig(routes, { rate_limit: 1000 }, { agent })));
  return home;
}

/** Writes what a killed process would have left (no close: nothing flushed at exit but what was synced). */
async function leaveInJournal(home: TempHome, now: number, write: (store: LocalStateStore) => void) {
  const store = new LocalStateStore({ dir: stateDir(home.dir), now: () => now });
  write(store);
  await store.durable();
  await store.close();
}

async function start(
  home: TempHome,
  clock: FakeClock,
  options: { stateStore?: LocalStateStore; drainTimeoutMs?: number } = {},
): Promise<Gateway> {
  const gateway = await startGateway({
    ...options,
    home: home.dir,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home.dir, SVC_HOME: home.dir },
    port: 0,
    now: clock.now,
    timers: clock,
    logger: createLogger({
      file: join(home.dir, "logs", "gateway.log"),
      fileFormat: "json",
      stdout: false,
      level: "debug",
    }),
    drainTimeoutMs: options.drainTimeoutMs ?? 5000,
  });
  running.push(gateway);
  return gateway;
}

const GROUPED = { secret: OPEN, coalesce: { key: "n", window_seconds: 60, max_wait_seconds: 600 } };

/** A group of route `grouped` for key 1, saved 5 s before `t0` with `merged` events, its latest `latest`. */
function leaveGroupForKey1(home: TempHome, t0: number, latest: string, merged: number) {
  return leaveInJournal(home, t0, (store) => {
    store.groupUpdated({
      id: "grouped\u00001",
      latest: run(latest, t0 - 5_000),
      merged,
      firstAt: t0 - 10_000,
      lastAt: t0 - 5_000,
    });
  });
}

/** An event `id` for key 1, answered coalesced; its group's quiet window passed, it runs once. */
async function groupedEventRuns(gateway: Gateway, home: TempHome, clock: FakeClock, id: string) {
  const answer = await postJson(
    `http://127.0.0.1:${gateway.port}/webhooks/grouped`,
    { n: 1 },
    { "X-Request-ID": id },
  );
  expect(answer.body).toEqual({ status: "coalesced" });
  clock.advance(60_000);
  await vi.waitFor(() => expect(appendedRuns(home.dir).get(id)).toBe(1), { timeout: 10_000, interval: 20 });
}

/** A journal whose writes fail with ENOSPC while `disk.full` is set, as on a full disk. */
function fillableJournal(home: string, now: () => number) {
  const { fs, disk } = fillableDisk();
  return { stateStore: new LocalStateStore({ dir: stateDir(home), now, fs }), disk };
}

describe("recovery from the local journal", { timeout: 30_000 }, () => {
  it("a pending group fires after what is left of its quiet window; an overdue one fires at once", async () => {
    const clock = fakeClock();
    const t0 = clock.now();
    const home = homeWith({ grouped: GROUPED });
    await leaveInJournal(home, t0, (store) => {
      // 20 s of its 60 s quiet window gone: fires 40 s after the start.
      store.groupUpdated({
        id: "grouped\u00001",
        latest: run("g1-b", t0 - 20_000),
        merged: 2,
        firstAt: t0 - 30_000,
        lastAt: t0 - 20_000,
      });
      // Its max wait (600 s from the first event) passed while the gateway was down: fires at once.
      store.groupUpdated({
        id: "grouped\u00002",
        latest: run("g2-a", t0 - 10_000),
        merged: 1,
        firstAt: t0 - 700_000,
        lastAt: t0 - 10_000,
      });
    });
    await start(home, clock);
    // Due now (a zero delay on the test's clock).
    clock.advance(0);
    await vi.waitFor(() => expect(appendedRuns(home.dir).get("g2-a")).toBe(1), {
      timeout: 10_000,
      interval: 20,
    });
    clock.advance(39_000);
    expect(appendedRuns(home.dir).has("g1-b")).toBe(false);
    clock.advance(1_000);
    await vi.waitFor(() => expect(appendedRuns(home.dir).get("g1-b")).toBe(1), {
      timeout: 10_000,
      interval: 20,
    });
  });

  it("a clock set back while the gateway was down (saved times ahead of now) leaves a group no more than its windows: it fires within its quiet window, not an hour later", async () => {
    const clock = fakeClock();
    const t0 = clock.now();
    const home = homeWith({ grouped: GROUPED });
    // Saved an hour ahead of the clock the gateway starts with (an NTP step back during the restart).
    await leaveInJournal(home, t0 + 3_600_000, (store) => {
      store.groupUpdated({
        id: "grouped\u00001",
        latest: run("ahead", t0 + 3_600_000),
        merged: 2,
        firstAt: t0 + 3_590_000,
        lastAt: t0 + 3_600_000,
      });
    });
    await start(home, clock);
    clock.advance(59_000);
    expect(appendedRuns(home.dir).has("ahead")).toBe(false);
    clock.advance(1_000);
    await vi.waitFor(() => expect(appendedRuns(home.dir).get("ahead")).toBe(1), {
      timeout: 10_000,
      interval: 20,
    });
  });

  it("a group reopened with its event ahead of a clock set back while the gateway was down: the events of its key received after its run are not superseded by it, each runs", async () => {
    const clock = fakeClock();
    const t0 = clock.now();
    const home = homeWith({
      grouped: { secret: OPEN, coalesce: { key: "n", window_seconds: 3, max_wait_seconds: 600 } },
    });
    // Saved 10 minutes ahead of the clock the gateway starts with (a VM snapshot restored, an NTP step at boot).
    await leaveInJournal(home, t0 + 600_000, (store) => {
      store.groupUpdated({
        id: "grouped\u00001",
        latest: run("d-a", t0 + 600_000),
        merged: 1,
        firstAt: t0 + 600_000,
        lastAt: t0 + 600_000,
      });
    });
    const gateway = await start(home, clock);
    clock.advance(3_000);
    await vi.waitFor(() => expect(appendedRuns(home.dir).get("d-a")).toBe(1), {
      timeout: 10_000,
      interval: 20,
    });
    // Each received on the new clock, 10 minutes before d-a's saved time: they were said superseded by d-a's
    // run (answered coalesced, never run) for the hour the key remembered it.
    await groupedEventRuns(gateway, home, clock, "d-b");
    clock.advance(40_000);
    await groupedEventRuns(gateway, home, clock, "d-c");
    const log = readFileSync(join(home.dir, "logs", "gateway.log"), "utf8");
    expect(log).not.toContain("superseded by a run already dispatched");
  });

  it("a group reopened with its event ahead of a clock set back while the gateway was down, an event of its key received before it fires: the group runs that event, not the saved one", async () => {
    const clock = fakeClock();
    const t0 = clock.now();
    const home = homeWith({ grouped: GROUPED });
    await leaveInJournal(home, t0 + 600_000, (store) => {
      store.groupUpdated({
        id: "grouped\u00001",
        latest: run("saved", t0 + 600_000),
        merged: 1,
        firstAt: t0 + 600_000,
        lastAt: t0 + 600_000,
      });
    });
    const gateway = await start(home, clock);
    // Received 10 minutes before the saved event's time on the new clock: it ran the saved event's payload.
    await groupedEventRuns(gateway, home, clock, "newer");
    expect(appendedRuns(home.dir).has("saved")).toBe(false);
    const log = readFileSync(join(home.dir, "logs", "gateway.log"), "utf8")
      .split("\n")
      .filter((line) => line.includes("coalesced group dispatched"))
      .map((line) => JSON.parse(line) as { delivery_id: string; superseded: number });
    expect(log.map((l) => [l.delivery_id, l.superseded])).toEqual([["newer", 1]]);
  });

  it("a group reopened with times ahead of the clock, killed before it fired and no event since: the next start counts its max wait from the start that reopened it, not anew", async () => {
    const clock = fakeClock();
    const t0 = clock.now();
    const windows = { secret: OPEN, coalesce: { key: "n", window_seconds: 60, max_wait_seconds: 90 } };
    const home = homeWith({ grouped: windows });
    await leaveInJournal(home, t0 + 3_600_000, (store) => {
      store.groupUpdated({
        id: "grouped\u00001",
        latest: run("ahead-2", t0 + 3_600_000),
        merged: 2,
        firstAt: t0 + 3_590_000,
        lastAt: t0 + 3_600_000,
      });
    });
    await start(home, clock);
    // What a kill 50 s later leaves: the journal as it is on disk then (copied without the live LOCK).
    const later = homeWith({ grouped: windows });
    await vi.waitFor(
      () => {
        const [group] = liveOnDisk(home).groups.values();
        expect(group).toMatchObject({ firstAt: t0, lastAt: t0 });
      },
      { timeout: 10_000, interval: 20 },
    );
    cpSync(stateDir(home.dir), stateDir(later.dir), {
      recursive: true,
      filter: (path) => !path.endsWith("LOCK"),
    });
    const clock2 = fakeClock(t0 + 50_000);
    await start(later, clock2);
    // 90 s from the first start: 40 s after this one (its whole 60 s quiet window would be 60 s).
    clock2.advance(39_000);
    expect(appendedRuns(later.dir).has("ahead-2")).toBe(false);
    clock2.advance(1_000);
    await vi.waitFor(() => expect(appendedRuns(later.dir).get("ahead-2")).toBe(1), {
      timeout: 10_000,
      interval: 20,
    });
  });

  it("a delivery id saved with its time ahead of the clock is forgotten an hour after the start that read it, also by a later start", async () => {
    const clock = fakeClock();
    const t0 = clock.now();
    const plain = { secret: OPEN };
    const home = homeWith({ plain });
    // Seen a minute before the step back, on the clock an hour ahead.
    await leaveInJournal(home, t0 + 3_600_000, (store) => store.remember("plain:ahead-id", t0 + 3_540_000));
    await start(home, clock);
    const later = homeWith({ plain });
    await vi.waitFor(() => expect(liveOnDisk(home).recovered(t0).seen).toEqual([["plain:ahead-id", t0]]), {
      timeout: 10_000,
      interval: 20,
    });
    cpSync(stateDir(home.dir), stateDir(later.dir), {
      recursive: true,
      filter: (path) => !path.endsWith("LOCK"),
    });
    // A start after a kill 61 minutes on: the hour from the start that read it is over.
    const next = await start(later, fakeClock(t0 + 61 * 60_000));
    const answer = await postJson(`http://127.0.0.1:${next.port}/webhooks/plain`, JSON.stringify({}), {
      "X-Request-ID": "ahead-id",
    });
    expect(answer.body).toMatchObject({ status: "accepted" });
  });

  it("a pending group whose route no longer coalesces runs at once; one whose route is gone stays", async () => {
    const clock = fakeClock();
    const t0 = clock.now();
    const home = homeWith({ grouped: { secret: OPEN } });
    await leaveInJournal(home, t0, (store) => {
      store.groupUpdated({
        id: "grouped\u00001",
        latest: run("was-grouped", t0 - 5_000),
        merged: 3,
        firstAt: t0 - 10_000,
        lastAt: t0 - 5_000,
      });
      store.groupUpdated({
        id: "gone\u00001",
        latest: run("route-gone", t0 - 5_000, "gone"),
        merged: 1,
        firstAt: t0 - 5_000,
        lastAt: t0 - 5_000,
      });
    });
    await start(home, clock);
    clock.advance(0);
    await vi.waitFor(() => expect(appendedRuns(home.dir).get("was-grouped")).toBe(1), {
      timeout: 10_000,
      interval: 20,
    });
    clock.advance(3_600_000);
    expect(appendedRuns(home.dir).has("route-gone")).toBe(false);
    const warned = readFileSync(join(home.dir, "logs", "gateway.log"), "utf8")
      .split("\n")
      .filter((line) => line.includes("not resumed"));
    expect(warned.map((line) => (JSON.parse(line) as { msg: string }).msg)).toEqual([
      expect.stringContaining(
        "[webhook] 1 pending coalescing group(s) not resumed — their route no longer exists (gone: 1);",
      ),
    ]);
  });

  it("a group whose run was recorded but not its end (a write cut between the two) makes that run once, not twice", async () => {
    const clock = fakeClock();
    const t0 = clock.now();
    const home = homeWith({ grouped: GROUPED });
    await leaveInJournal(home, t0, (store) => {
      store.groupUpdated({
        id: "grouped\u00001",
        latest: run("fired-latest", t0 - 5_000),
        merged: 2,
        firstAt: t0 - 70_000,
        lastAt: t0 - 5_000,
      });
      // The group fired: its run's record made it to the file, the group's end did not.
      store.runAccepted(run("fired-latest", t0 - 5_000), t0);
    });
    const gateway = await start(home, clock);
    clock.advance(0);
    await vi.waitFor(() => expect(appendedRuns(home.dir).get("fired-latest")).toBe(1), {
      timeout: 10_000,
      interval: 20,
    });
    clock.advance(3_600_000);
    // The stop flushes what is pending and waits for every queued run.
    await gateway.stop();
    running.splice(running.indexOf(gateway), 1);
    expect(appendedRuns(home.dir).get("fired-latest")).toBe(1);
  });

  it("a group whose latest event reuses the id of an earlier event whose run still waits (a redelivery after the hour) is reopened: both run", async () => {
    const clock = fakeClock();
    const t0 = clock.now();
    const home = homeWith({ grouped: GROUPED });
    await leaveInJournal(home, t0, (store) => {
      store.runAccepted(run("reused", t0 - 2 * 3_600_000), t0 - 2 * 3_600_000);
      store.groupUpdated({
        id: "grouped\u00001",
        latest: run("reused", t0 - 5_000),
        merged: 1,
        firstAt: t0 - 5_000,
        lastAt: t0 - 5_000,
      });
    });
    const gateway = await start(home, clock);
    clock.advance(60_000);
    await vi.waitFor(() => expect(appendedRuns(home.dir).get("reused")).toBe(2), {
      timeout: 10_000,
      interval: 20,
    });
    await gateway.stop();
    running.splice(running.indexOf(gateway), 1);
    expect(appendedRuns(home.dir).get("reused")).toBe(2);
  });

  it("a saved group left in the journal (its route gone) takes in the first event for its key once a reload brings the route back: one group, one run with the newest event", async () => {
    const clock = fakeClock();
    const t0 = clock.now();
    const home = homeWith({ other: { secret: OPEN } });
    await leaveGroupForKey1(home, t0, "saved-latest", 3);
    const gateway = await start(home, clock);
    // The route comes back by a reload (which does not run the saved group by itself), and an event for
    // the same key comes in: it joins the saved group, which the older event no longer outlives.
    home.write(
      "config.yaml",
      stringify(webhookConfig({ grouped: GROUPED }, { rate_limit: 1000 }, { agent: appendAgent(2) })),
    );
    gateway.reload();
    await groupedEventRuns(gateway, home, clock, "after-reload");
    const log = () =>
      readFileSync(join(home.dir, "logs", "gateway.log"), "utf8")
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => JSON.parse(line) as { msg: string; superseded?: number; delivery_id?: string });
    expect(log().filter((line) => line.msg.endsWith("coalesced group dispatched"))).toEqual([
      expect.objectContaining({ delivery_id: "after-reload", superseded: 3 }),
    ]);
    expect(log().map((line) => line.msg)).toContain(
      "[state] grouped: 1 coalescing group(s) held since the start (the route was gone) reopened with the route's first event since, which joins its key's group",
    );
    await gateway.stop();
    running.splice(running.indexOf(gateway), 1);
    // The group ended with its run: the next start reopens nothing, and the older event never runs alone.
    await start(home, clock);
    clock.advance(3_600_000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(appendedRuns(home.dir).has("saved-latest")).toBe(false);
    expect(appendedRuns(home.dir).get("after-reload")).toBe(1);
  });

  it("a saved group whose route is back under another profile stays held: the route's group for its key is journaled apart, and its end leaves the saved one", async () => {
    const clock = fakeClock();
    const t0 = clock.now();
    const home = homeWith({ grouped: { ...GROUPED, profile: "work" } });
    mkdirSync(join(home.dir, "profiles", "work"), { recursive: true });
    await leaveGroupForKey1(home, t0, "saved-default", 2);
    const gateway = await start(home, clock);
    await groupedEventRuns(gateway, home, clock, "work-event");
    expect(appendedRuns(home.dir).has("saved-default")).toBe(false);
    await gateway.stop();
    running.splice(running.indexOf(gateway), 1);
    // The work group's end did not remove the saved one: it is still held at the next start, not lost.
    const store = new LocalStateStore({ dir: stateDir(home.dir), now: () => clock.now() });
    const groups = store.recover().groups;
    await store.close();
    expect(groups.map((g) => g.latest.deliveryId)).toEqual(["saved-default"]);
  });

  it("a named profile's group left under both its earlier id and its id with the profile (a kill between the rename's two writes) is one group: it runs its one event once, with what was left of its window", async () => {
    const clock = fakeClock();
    const t0 = clock.now();
    const home = homeWith({ grouped: { ...GROUPED, profile: "beta" } });
    mkdirSync(join(home.dir, "profiles", "beta"), { recursive: true });
    const group = {
      latest: { ...run("only-one", t0 - 5_000), profile: "beta" },
      merged: 1,
      firstAt: t0 - 5_000,
      lastAt: t0 - 5_000,
    };
    // A start that reopened the earlier version's record wrote it again under its new id, then was
    // killed before it wrote the end of the earlier record.
    await leaveInJournal(home, t0, (store) => {
      store.groupUpdated({ id: "grouped\u00001", ...group });
      store.groupUpdated({ id: "grouped@beta\u00001", ...group });
    });
    const gateway = await start(home, clock);
    // 55 s of its 60 s quiet window were left at the start: not 60 s again.
    clock.advance(54_000);
    expect(appendedRuns(home.dir).has("only-one")).toBe(false);
    clock.advance(1_000);
    await vi.waitFor(() => expect(appendedRuns(home.dir).get("only-one")).toBe(1), {
      timeout: 10_000,
      interval: 20,
    });
    const log = readFileSync(join(home.dir, "logs", "gateway.log"), "utf8")
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as { msg: string; superseded?: number; delivery_id?: string });
    expect(log.map((line) => line.msg)).toContain(
      "[state] 1 pending coalescing group(s) reopened with what is left of their windows",
    );
    expect(log.filter((line) => line.msg.endsWith("coalesced group dispatched"))).toEqual([
      expect.objectContaining({ delivery_id: "only-one", superseded: 0 }),
    ]);
    await gateway.stop();
    running.splice(running.indexOf(gateway), 1);
    // Neither record is left for the next start.
    const store = new LocalStateStore({ dir: stateDir(home.dir), now: () => clock.now() });
    const groups = store.recover().groups;
    await store.close();
    expect(groups).toEqual([]);
  });

  it("a delivery id accepted before the restart is a duplicate within the hour, a new event after it", async () => {
    const clock = fakeClock();
    const t0 = clock.now();
    const home = homeWith({ pr: { secret: OPEN } });
    await leaveInJournal(home, t0, (store) => {
      store.remember("pr:recent", t0 - 59 * 60_000);
      store.remember("pr:old", t0 - 61 * 60_000);
      store.delivered("pr:direct", t0 - 60_000);
    });
    const gateway = await start(home, clock);
    const send = (id: string) =>
      postJson(`http://127.0.0.1:${gateway.port}/webhooks/pr`, { a: 1 }, { "X-Request-ID": id });
    expect((await send("recent")).body).toEqual({ status: "duplicate" });
    expect((await send("direct")).body).toEqual({ status: "duplicate" });
    expect((await send("old")).status).toBe(202);
  });

  it("a corrupt journal tail: the gateway starts, logs where, and runs what came before it", async () => {
    const clock = fakeClock();
    const t0 = clock.now();
    const home = homeWith({ pr: { secret: OPEN } });
    await leaveInJournal(home, t0, (store) => {
      store.runAccepted(run("before-tail", t0, "pr"), t0);
    });
    const dir = stateDir(home.dir);
    const segment = readdirSync(dir).find((name) => name.endsWith(".seg")) as string;
    // Written where the records end, in the space the segment was grown into.
    const file = join(dir, segment);
    const data = readFileSync(file);
    Buffer.from("\u0010\u0000\u0000\u0000garbage, not a record").copy(data, recordsEnd(file));
    writeFileSync(file, data);
    await start(home, clock);
    await vi.waitFor(() => expect(appendedRuns(home.dir).get("before-tail")).toBe(1), {
      timeout: 10_000,
      interval: 20,
    });
    const log = readFileSync(join(home.dir, "logs", "gateway.log"), "utf8");
    expect(log).toContain(`${segment}: CRC mismatch at byte`);
  });

  it("a flipped byte in a middle record: the runs after it still run, and the damaged segment is kept aside, named in the log", async () => {
    const clock = fakeClock();
    const t0 = clock.now();
    const home = homeWith({ pr: { secret: OPEN } });
    await leaveInJournal(home, t0, (store) => {
      for (const id of ["first", "damaged", "last"]) store.runAccepted(run(id, t0, "pr"), t0);
    });
    const dir = stateDir(home.dir);
    const segment = readdirSync(dir).find((name) => name.endsWith(".seg")) as string;
    const data = readFileSync(join(dir, segment));
    const at = data.indexOf("damaged");
    data[at] = (data[at] as number) ^ 0x20;
    writeFileSync(join(dir, segment), data);
    await start(home, clock);
    // The two runs share the agent's two slots: either may finish first.
    await vi.waitFor(
      () => {
        const runs = appendedRuns(home.dir);
        expect([runs.get("first"), runs.get("last")]).toEqual([1, 1]);
      },
      { timeout: 10_000, interval: 20 },
    );
    const kept = readdirSync(dir).find((name) => name.startsWith(`${segment}.damaged-`)) as string;
    // Buffer.equals: a deep comparison of the 1 MiB segment byte by byte took ~3 s.
    expect(readFileSync(join(dir, kept)).equals(data)).toBe(true);
    const log = readFileSync(join(home.dir, "logs", "gateway.log"), "utf8");
    expect(log).toContain(`${join(dir, segment)}: CRC mismatch at byte`);
    expect(log).toContain(`the records after it recovered; the segment is kept as ${kept}`);
  });

  it("a segment unreadable from its first byte: the gateway starts, the segment is kept aside and the log says what was lost, not that records before it were recovered", async () => {
    const clock = fakeClock();
    const t0 = clock.now();
    const home = homeWith({ pr: { secret: OPEN } });
    await leaveInJournal(home, t0, (store) => {
      store.runAccepted(run("lost", t0, "pr"), t0);
      store.remember("pr:lost", t0);
    });
    const dir = stateDir(home.dir);
    const segment = readdirSync(dir).find((name) => name.endsWith(".seg")) as string;
    const file = join(dir, segment);
    const data = readFileSync(file);
    // Its first 4 KiB (every record) lost to garbage whose first length (1 MiB) reaches into the grown zeros.
    Buffer.alloc(4096, 0xa5).copy(data);
    data.writeUInt32LE(0x100000, 0);
    writeFileSync(file, data);
    const gateway = await start(home, clock);
    const kept = readdirSync(dir).find((name) => name.startsWith(`${segment}.damaged-`)) as string;
    expect(kept).toBeDefined();
    expect(readFileSync(join(dir, kept)).equals(data)).toBe(true);
    expect(existsSync(file)).toBe(false);
    const log = readFileSync(join(home.dir, "logs", "gateway.log"), "utf8");
    expect(log).toContain(
      `${file}: no record of it could be read (CRC mismatch at byte 0; 4096 bytes skipped), though every segment starts with a snapshot: what it held is lost`,
    );
    expect(log).toContain(
      `the segment is kept as ${kept} (inspect it as docs/durability.md shows, then delete it)`,
    );
    expect(log).not.toContain("the records before it were recovered");
    // What it held is gone: the delivery id is no longer known.
    const retry = await postJson(
      `http://127.0.0.1:${gateway.port}/webhooks/pr`,
      { a: 1 },
      { "X-Request-ID": "lost" },
    );
    expect(retry.status).toBe(202);
  });

  it("a journal write that fails (disk full): the request is answered 503 and its run never starts; the sender's retry runs it once", async () => {
    const clock = fakeClock();
    const home = homeWith({ pr: { secret: OPEN } });
    const { stateStore, disk } = fillableJournal(home.dir, clock.now);
    const gateway = await start(home, clock, { stateStore });
    const send = (id: string) =>
      postJson(`http://127.0.0.1:${gateway.port}/webhooks/pr`, { a: 1 }, { "X-Request-ID": id });
    expect((await send("kept")).status).toBe(202);
    const base = `http://127.0.0.1:${gateway.port}`;
    expect(await scrapedSample(base, "svc_state_available")).toBe(1);
    disk.full = true;
    expect(await send("refused")).toMatchObject({
      status: 503,
      body: { error: "Could not record the event, retry later" },
    });
    expect(await scrapedSample(base, "svc_state_available")).toBe(0);
    await vi.waitFor(() => expect(appendedRuns(home.dir).get("kept")).toBe(1), {
      timeout: 10_000,
      interval: 20,
    });
    const log = () => readFileSync(join(home.dir, "logs", "gateway.log"), "utf8");
    await vi.waitFor(
      () =>
        expect(log()).toContain("pr: run not started — its event could not be recorded and was answered 503"),
      { timeout: 10_000, interval: 20 },
    );
    expect(appendedRuns(home.dir).has("refused")).toBe(false);
    disk.full = false;
    expect((await send("refused")).status).toBe(202);
    expect(await scrapedSample(base, "svc_state_available")).toBe(1);
    await vi.waitFor(() => expect(appendedRuns(home.dir).get("refused")).toBe(1), {
      timeout: 10_000,
      interval: 20,
    });
  });

  it("a coalesced event answered 503 (disk full) that opened its group alone: the group owes no run and ends without one; the sender's retry runs once", async () => {
    const clock = fakeClock();
    // One slot: the groups' runs go in the order the groups fire.
    const home = homeWith({ grouped: GROUPED }, appendAgent(1));
    const { stateStore, disk } = fillableJournal(home.dir, clock.now);
    const gateway = await start(home, clock, { stateStore });
    const send = (id: string, n: number) =>
      postJson(`http://127.0.0.1:${gateway.port}/webhooks/grouped`, { n }, { "X-Request-ID": id });
    disk.full = true;
    expect(await send("refused", 1)).toMatchObject({
      status: 503,
      body: { error: "Could not record the event, retry later" },
    });
    disk.full = false;
    expect(await send("sentinel", 2)).toMatchObject({ status: 202, body: { status: "coalesced" } });
    // Both windows end: the first group (opened first) would run first.
    clock.advance(60_000);
    await vi.waitFor(() => expect(appendedRuns(home.dir).get("sentinel")).toBe(1), {
      timeout: 10_000,
      interval: 20,
    });
    expect(appendedRuns(home.dir).has("refused")).toBe(false);
    const log = () => readFileSync(join(home.dir, "logs", "gateway.log"), "utf8");
    expect(log()).toContain(
      "grouped: coalescing group ended without a run — every event of it was answered 503 (its record could not be written), so the sender's retry runs it",
    );
    // Its id is forgotten, also across a restart (the journal restated after the outage does not keep it):
    // the sender's retry is taken and opens a group of its own — one run.
    await gateway.stop();
    running.splice(running.indexOf(gateway), 1);
    const restarted = await start(home, clock);
    expect(
      await postJson(
        `http://127.0.0.1:${restarted.port}/webhooks/grouped`,
        { n: 1 },
        { "X-Request-ID": "refused" },
      ),
    ).toMatchObject({ status: 202, body: { status: "coalesced" } });
    clock.advance(60_000);
    await vi.waitFor(() => expect(appendedRuns(home.dir).get("refused")).toBe(1), {
      timeout: 10_000,
      interval: 20,
    });
    expect(log()).toMatch(/"delivery_id":"refused","superseded":0,"reason":"quiet_window"/);
  });

  it("a refused event still waiting for a slot leaves the queue at once: a stop does not save it for the next start", async () => {
    const clock = fakeClock();
    // One slot, held by a run that outlasts the test.
    const home = homeWith({ pr: { secret: OPEN } }, appendAgent(1, 60));
    const { stateStore, disk } = fillableJournal(home.dir, clock.now);
    const gateway = await start(home, clock, { stateStore, drainTimeoutMs: 0 });
    const send = (id: string) =>
      postJson(`http://127.0.0.1:${gateway.port}/webhooks/pr`, { a: 1 }, { "X-Request-ID": id });
    expect((await send("busy")).status).toBe(202);
    disk.full = true;
    expect((await send("waiting")).status).toBe(503);
    const log = () => readFileSync(join(home.dir, "logs", "gateway.log"), "utf8");
    await vi.waitFor(() => expect(log()).toContain('"delivery_id":"waiting"'), {
      timeout: 10_000,
      interval: 20,
    });
    expect(log()).toContain("pr: run not started — its event could not be recorded and was answered 503");
    disk.full = false;
    await gateway.stop();
    running.splice(running.indexOf(gateway), 1);
    const saved = readPendingRuns(join(home.dir, "webhook-pending-runs.json"));
    expect(saved.runs.map((r) => r.deliveryId)).toEqual(["busy"]);
  });

  it("webhook-pending-runs.json from a graceful stop (or an older version) is taken into the journal, then removed", async () => {
    const clock = fakeClock();
    const t0 = clock.now();
    const home = homeWith({ pr: { secret: OPEN } });
    const file = join(home.dir, "webhook-pending-runs.json");
    writePendingRuns(file, { runs: [run("saved-1", t0, "pr"), run("saved-2", t0, "pr")], unreadable: [] });
    await leaveInJournal(home, t0, (store) => {
      // Known to the journal already (it finished): not run a second time from the file.
      store.runAccepted(run("saved-2", t0, "pr"), t0);
      store.runFinished("pr", "saved-2");
    });
    await start(home, clock);
    expect(existsSync(file)).toBe(false);
    await vi.waitFor(() => expect(appendedRuns(home.dir).get("saved-1")).toBe(1), {
      timeout: 10_000,
      interval: 20,
    });
    expect(appendedRuns(home.dir).has("saved-2")).toBe(false);
  });

  it("a state directory that cannot be opened refuses the start with the path and what to check", async () => {
    const home = homeWith({ pr: { secret: OPEN } });
    home.write("state", "a file where the directory should be");
    await expect(start(home, fakeClock())).rejects.toThrow(
      /state: the state journal cannot be opened \(.*\) — check that the directory and its files can be read and written by this user and the disk has room/,
    );
  });
});
