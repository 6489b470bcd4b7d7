import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setImmediate } from "node:timers/promises";
import { afterEach, expect, it } from "vitest";
import { answerHere } from "../../../src/io/sessions/indexWorker.js";
import { sessionsQueued } from "../../../src/io/sessions/orderedAppends.js";
import { SessionStore } from "../../../src/io/sessions/store.js";
import { extendObject, parseJson, stringifyJson } from "../../../src/streams/jsonNumbers/index.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home?.cleanup());

/**
 * A store that reads and rewrites its index on this thread (what the session index's thread runs), so the
 * parse its lookups keep is the one its rewrites use and keep.
 */
const storeHere = (sessions: string, now: () => Date) =>
  new SessionStore(sessions, now, undefined, answerHere);

/** A clock a second further on each time it is read, so every append changes its session's `updated_at`. */
function ticking(): () => Date {
  let at = Date.parse("2026-12-04T18:00:00.000Z");
  return () => {
    at += 1000;
    return new Date(at);
  };
}

/** The index as a whole rewrite writes it: `text` parsed, the entry of `key` given `updated_at`, serialized. */
function rewritten(text: string, key: string, updatedAt: string): string {
  const index = parseJson(text.replace(/^\uFEFF/, "")) as {
    sessions: Record<string, Record<string, unknown>>;
  };
  index.sessions[key] = extendObject(index.sessions[key] as Record<string, unknown>, {
    updated_at: updatedAt,
  });
  return `${stringifyJson(index, 2)}\n`;
}

/** A home whose index holds two Telegram sessions, `telegram:-1` (its transcript made) and `telegram:-2`. */
function twoSessionHome(): { sessions: string; indexPath: string } {
  home = tempHome();
  const indexPath = home.write(
    "sessions/index.json",
    JSON.stringify({
      version: 1,
      sessions: {
        "telegram:-1": { key: "telegram:-1", file: "telegram/-1.jsonl" },
        "telegram:-2": { key: "telegram:-2", file: "telegram/-2.jsonl" },
      },
    }),
  );
  home.write("sessions/telegram/-1.jsonl", "");
  return { sessions: join(home.dir, "sessions"), indexPath };
}

// A mirrored delivery's locked rewrite read and parsed the whole index again each time (with 10,000 sessions,
// 3.5 MB, most of the ~150 ms it held the gateway's event loop), though no one had changed it since this
// process wrote it; it now uses the parse it wrote, unless the file's identity (or, within 2 s of a change,
// its bytes) shows another writer's change, and serializes only the changed entry into the bytes it wrote.
it("a rewrite uses the parse it wrote, and still reads each change another writer makes in between", async () => {
  const { sessions, indexPath } = twoSessionHome();
  home.write("sessions/telegram/-2.jsonl", "");
  const store = storeHere(sessions, ticking());
  const entry = [{ role: "assistant" as const, content: "mirrored" }];
  expect(await store.append("telegram:-1", entry)).toBe(true);
  const other = store.get("telegram:-2");
  expect(await store.append("telegram:-1", entry)).toBe(true);
  // Not parsed again: the other session's entry is the object the last write kept.
  expect(store.get("telegram:-2")).toBe(other);

  // Another writer replaces the file (a new inode) between two rewrites: its change is kept.
  const theirs = JSON.parse(readFileSync(indexPath, "utf8"));
  theirs.sessions["telegram:-2"].title = "set by the front end";
  writeFileSync(`${indexPath}.tmp`, JSON.stringify(theirs, null, 2));
  renameSync(`${indexPath}.tmp`, indexPath);
  let before = readFileSync(indexPath, "utf8");
  expect(await store.append("telegram:-1", entry)).toBe(true);
  let after = readFileSync(indexPath, "utf8");
  expect(after).toBe(rewritten(before, "telegram:-1", store.get("telegram:-1")?.updated_at ?? ""));
  expect(JSON.parse(after).sessions["telegram:-2"].title).toBe("set by the front end");

  // Rewritten in place at the same size right after this process's write (its inode kept): read too.
  const sameSize = after.replace('"set by the front end"', '"SET BY THE FRONT END"');
  writeFileSync(indexPath, sameSize);
  expect(await store.append("telegram:-1", entry)).toBe(true);
  after = readFileSync(indexPath, "utf8");
  expect(after).toBe(rewritten(sameSize, "telegram:-1", store.get("telegram:-1")?.updated_at ?? ""));
  expect(JSON.parse(after).sessions["telegram:-2"].title).toBe("SET BY THE FRONT END");

  before = after;
  expect(await store.append("telegram:-2", entry)).toBe(true);
  expect(readFileSync(indexPath, "utf8")).toBe(
    rewritten(before, "telegram:-2", store.get("telegram:-2")?.updated_at ?? ""),
  );
});

// The entry alone is serialized into the bytes last written: the file must be byte for byte what a
// rewrite of the whole index writes, whatever the index holds around it.
it("serializing only the changed entry writes the bytes a whole rewrite writes", async () => {
  home = tempHome();
  const sessions = join(home.dir, "sessions");
  const keys = ["telegram:-1", 'odd "key"\\ é ☃', "20", "10", "telegram:-9"];
  const record = (key: string) =>
    `{"key": ${JSON.stringify(key)}, "file": "t/${keys.indexOf(key)}.jsonl", "n": 1.0, "big": 9007199254740993,
      "nested": {"telegram:-1": {"a": [1, 2.50, {"20": 1e3}]}, "list": [], "empty": {}}, "30": "digit key"}`;
  // A top-level object before and after `sessions` holding a session's key at the same depth, compact text
  // with a byte order mark (a front end's or an editor's).
  const indexPath = home.write(
    "sessions/index.json",
    `\uFEFF{"front_end": {"telegram:-1": {"cursor": 12345678901234567890}, "x": "\\n  }"}, "version": 1,
      "sessions": {${keys.map((key) => `${JSON.stringify(key)}: ${record(key)}`).join(",")}},
      "after": {"telegram:-9": 1.50}}`,
  );
  for (let i = 0; i < keys.length; i++) home.write(`sessions/t/${i}.jsonl`, "");
  const store = storeHere(sessions, ticking());
  const entry = [{ role: "assistant" as const, content: "mirrored" }];
  for (const key of [...keys, ...keys.toReversed(), "telegram:-1", "telegram:-1"]) {
    const before = readFileSync(indexPath, "utf8");
    expect(await store.append(key, entry)).toBe(true);
    expect(readFileSync(indexPath, "utf8")).toBe(rewritten(before, key, store.get(key)?.updated_at ?? ""));
  }
  // A session svc adds, then appended to.
  await store.openChat("telegram", "-77");
  home.write("sessions/telegram/-77.jsonl", "");
  const before = readFileSync(indexPath, "utf8");
  expect(await store.append("telegram:-77", entry)).toBe(true);
  expect(readFileSync(indexPath, "utf8")).toBe(
    rewritten(before, "telegram:-77", store.get("telegram:-77")?.updated_at ?? ""),
  );
});

// The rewrite wrote and fsynced the index (3.5 MB at 10,000 sessions) on the event loop, holding every
// webhook request behind it; now the write and its fsyncs run on libuv's threads while the lock is held.
// Lookups made meanwhile see the index as the file still holds it, and the new entry once it is renamed.
it("an append returns to the event loop before the index is written, and lookups meanwhile see the file", async () => {
  const { sessions, indexPath } = twoSessionHome();
  const store = storeHere(sessions, ticking());
  const entry = [{ role: "assistant" as const, content: "mirrored" }];
  expect(await store.append("telegram:-1", entry)).toBe(true);
  for (let i = 0; i < 2; i++) {
    const before = readFileSync(indexPath, "utf8");
    const was = store.get("telegram:-1");
    const other = store.get("telegram:-2");
    // Nothing queued before it for the session (the last append's turn has ended): it starts at once.
    await setImmediate();
    expect(sessionsQueued()).toBe(0);
    const appended = store.append("telegram:-1", entry);
    // The transcript is appended under the lock at once; the index is not written yet.
    expect(readFileSync(indexPath, "utf8")).toBe(before);
    expect(store.get("telegram:-1")).toBe(was);
    expect(await appended).toBe(true);
    const now = store.get("telegram:-1");
    expect(now?.updated_at).not.toBe(was?.updated_at);
    expect(readFileSync(indexPath, "utf8")).toBe(rewritten(before, "telegram:-1", now?.updated_at ?? ""));
    expect(store.get("telegram:-2")).toBe(other);
  }
  expect(store.entries("telegram:-1")).toHaveLength(3);
});
