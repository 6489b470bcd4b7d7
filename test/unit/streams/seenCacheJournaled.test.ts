import { describe, expect, it } from "vitest";
import { createSeenCache } from "../../../src/streams/seenCache.js";

const HOUR = 60 * 60 * 1000;

function cacheAt(start: number, maxEntries = 100) {
  let t = start;
  const cache = createSeenCache({ ttlMs: HOUR, maxEntries, now: () => t });
  return {
    cache,
    now: () => t,
    advance: (ms: number) => {
      t += ms;
    },
  };
}

describe("the journal's side of the idempotency cache (state.backend: local)", () => {
  it("lists only the keys the journal recorded, each with its first time and the flags its records added", () => {
    const { cache, now, advance } = cacheAt(1_000_000);
    cache.checkAndAdd("pr:a");
    cache.checkAndAdd("pr:b"); // taken by the pipeline, not (yet) recorded: not the journal's to restate
    cache.journaled.note("pr:a", now(), 2);
    advance(5);
    cache.journaled.note("pr:a", now(), 1);
    expect([...cache.journaled.list(now())]).toEqual([["pr:a", 1_000_000, 3]]);
  });

  it("makes a key the journal recorded and the pipeline never took a duplicate, for the rest of its hour", () => {
    const { cache, now, advance } = cacheAt(1_000_000);
    cache.journaled.note("pr:random", now() - 1_000, 2);
    expect(cache.checkAndAdd("pr:random")).toBe(true);
    advance(HOUR - 1_001);
    expect(cache.has("pr:random")).toBe(true);
    advance(1);
    expect(cache.has("pr:random")).toBe(false);
    expect([...cache.journaled.list(now())]).toEqual([]);
    // Recorded past its hour already (a replay of an old record): not kept at all.
    cache.journaled.note("pr:old", now() - HOUR, 0);
    expect(cache.has("pr:old")).toBe(false);
  });

  it("forgets a key the pipeline forgets (its request answered 503): the journal restates it no more", () => {
    const { cache, now } = cacheAt(1_000_000);
    cache.checkAndAdd("pr:a");
    cache.journaled.note("pr:a", now(), 2);
    cache.delete("pr:a");
    expect([...cache.journaled.list(now())]).toEqual([]);
    cache.checkAndAdd("pr:a");
    expect([...cache.journaled.list(now())]).toEqual([]);
  });

  it("drops a key's journal side with the key: at the end of its hour and past the cap", () => {
    const { cache, now, advance } = cacheAt(0, 3);
    for (const id of ["a", "b", "c", "d"]) {
      cache.checkAndAdd(id);
      cache.journaled.note(id, now(), 0);
      advance(1);
    }
    expect([...cache.journaled.list(now())].map(([key]) => key)).toEqual(["b", "c", "d"]);
    advance(HOUR - 2); // b's hour and c's are over
    cache.journaled.prune(now());
    expect([...cache.journaled.list(now())].map(([key]) => key)).toEqual(["d"]);
  });

  it("does not list a key recorded after the list began (its own record follows the restatement)", () => {
    const { cache, now } = cacheAt(1_000_000);
    cache.journaled.note("pr:a", now(), 0);
    cache.journaled.note("pr:b", now(), 0);
    const listed: string[] = [];
    for (const [key] of cache.journaled.list(now())) {
      listed.push(key);
      cache.journaled.note(`pr:after-${key}`, now(), 0);
    }
    expect(listed).toEqual(["pr:a", "pr:b"]);
    expect([...cache.journaled.list(now())]).toHaveLength(4);
  });

  it("counts times ahead of now (a clock set back) from now", () => {
    const { cache, now } = cacheAt(1_000_000);
    cache.checkAndAdd("pr:a");
    cache.journaled.note("pr:a", now() + 50_000, 0);
    cache.journaled.notAhead(now());
    expect([...cache.journaled.list(now())]).toEqual([["pr:a", 1_000_000, 0]]);
  });

  it("lists lazily only as far as the keys went when it began, each key once, when the ring is compacted midway", () => {
    const { cache, now } = cacheAt(1_000_000, 8);
    // Keys forgotten first leave holes ahead of those listed, which a compaction then closes up.
    for (const id of ["x", "y", "z"]) {
      cache.checkAndAdd(id);
      cache.delete(id);
    }
    for (const id of ["a", "b", "c", "d"]) {
      cache.checkAndAdd(id);
      cache.journaled.note(id, now(), 2);
    }
    const listed: string[] = [];
    let n = 0;
    for (const [key] of cache.journaled.list(now())) {
      listed.push(key);
      // Each key read, keys come and go: forgotten ones leave holes until the ring (16 slots) is numbered anew.
      for (let i = 0; i < 5; i++) {
        const id = `new-${n++}`;
        cache.checkAndAdd(id);
        cache.journaled.note(id, now(), 0);
        cache.delete(id);
      }
      if (listed.length > 50) break;
    }
    // The four keys are still held (each new one was forgotten): each is listed, none of the new ones is.
    expect(listed).toEqual(["a", "b", "c", "d"]);
  });
});
