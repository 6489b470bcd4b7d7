import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, expect, it } from "vitest";
import { mirrorDelivery } from "../../../src/io/sessions/mirror.js";
import { sessionsQueued } from "../../../src/io/sessions/orderedAppends.js";
import { SessionStore } from "../../../src/io/sessions/store.js";
import { withFileLock } from "../../../src/io/stores/fileLock.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home?.cleanup());

const NOW = new Date("2026-11-22T20:00:00.000Z");

// Two runs of one chat finish close together while another writer (the chat front end) holds the index's
// lock: each waiter polls for the lock on its own backoff, so the later mirror (polling more often) took the
// lock first and its entry went into the transcript before the earlier one's.
it("mirrors to one chat are appended in the order they were made, also when the index's lock is held meanwhile", async () => {
  home = tempHome();
  const store = SessionStore.forProfile(home.dir, undefined, () => NOW);
  await store.openChat("telegram", "-1");
  let release: () => void = () => {};
  const held = withFileLock(store.indexPath, () => new Promise<void>((resolve) => (release = resolve)));
  const mirror = (text: string) =>
    mirrorDelivery(
      { home: home.dir, profile: undefined, platform: "telegram", chatId: "-1", route: "ci", text },
      () => NOW,
    );
  const first = mirror("run 1 done");
  // The first mirror's waits for the lock have grown longer than the second's first ones.
  await sleep(120);
  const second = mirror("run 2 done");
  await sleep(10);
  release();
  await held;
  expect(await Promise.all([first, second])).toEqual([true, true]);
  expect(store.entries("telegram:-1").map((entry) => entry.content)).toEqual([
    "[Webhook delivery: ci]\nrun 1 done",
    "[Webhook delivery: ci]\nrun 2 done",
  ]);
});

it("appends to two sessions keep each session's order, and no queue is kept once they end", async () => {
  home = tempHome();
  const store = new SessionStore(join(home.dir, "sessions"), () => NOW);
  await store.openChat("telegram", "-1");
  await store.openChat("telegram", "-2");
  const appends = Array.from({ length: 20 }, (_, i) =>
    store.append(`telegram:-${1 + (i % 2)}`, [{ role: "assistant", content: String(i) }]),
  );
  expect(await Promise.all(appends)).toEqual(Array(20).fill(true));
  expect(store.entries("telegram:-1").map((entry) => entry.content)).toEqual([
    "0",
    "2",
    "4",
    "6",
    "8",
    "10",
    "12",
    "14",
    "16",
    "18",
  ]);
  expect(store.entries("telegram:-2").map((entry) => entry.content)).toEqual([
    "1",
    "3",
    "5",
    "7",
    "9",
    "11",
    "13",
    "15",
    "17",
    "19",
  ]);
  expect(sessionsQueued()).toBe(0);
  // An append that writes nothing (no such session) does not hold up the ones after it.
  const after = [
    store.append("telegram:-3", [{ role: "assistant", content: "x" }]),
    store.append("telegram:-1", [{ role: "assistant", content: "20" }]),
  ];
  expect(await Promise.all(after)).toEqual([false, true]);
});

// Queued behind each other, every append waited for the lock's whole wait after the one before it gave up:
// with the index held for good, the tenth mirror of a chat failed only after ten waits (and a stop, which
// writes the mirrors still under way, waited as long). Each append's wait is counted from when it was asked.
it("while the index stays locked, appends queued on one session give up together, not one wait after another", async () => {
  home = tempHome();
  const store = new SessionStore(join(home.dir, "sessions"), () => NOW, 150);
  await store.openChat("telegram", "-1");
  let release: () => void = () => {};
  const held = withFileLock(store.indexPath, () => new Promise<void>((resolve) => (release = resolve)));
  const outcomes: unknown[] = [];
  const appends = Array.from({ length: 4 }, (_, i) =>
    store.append("telegram:-1", [{ role: "assistant", content: String(i) }]).then(
      () => (outcomes[i] = "written"),
      (err: { code?: string }) => (outcomes[i] = err.code),
    ),
  );
  await appends[0];
  expect(outcomes[0]).toBe("lock_timeout");
  // The others' waits ran out with the first one's: each makes one last try, none waits the whole wait again.
  await sleep(40);
  expect(outcomes).toEqual(["lock_timeout", "lock_timeout", "lock_timeout", "lock_timeout"]);
  release();
  await held;
  expect(await store.append("telegram:-1", [{ role: "assistant", content: "after" }])).toBe(true);
});
