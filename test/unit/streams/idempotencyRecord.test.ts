import { describe, expect, it } from "vitest";
import { createIdempotencyRecord } from "../../../src/streams/idempotencyRecord.js";
import { createSeenCache } from "../../../src/streams/seenCache.js";

function record() {
  const seen = createSeenCache({ ttlMs: 3_600_000, maxEntries: 100, now: () => 0 });
  const forgotten: string[] = [];
  const r = createIdempotencyRecord({
    checkAndAdd: (key) => seen.checkAndAdd(key),
    forget: (key) => {
      forgotten.push(key);
      seen.delete(key);
    },
  });
  return { r, seen, forgotten };
}

describe("the idempotency record: a key is pending, then done or failed", () => {
  it("pending while its delivery is under way; done keeps the key, so a repeat is a duplicate", async () => {
    const { r, seen, forgotten } = record();
    expect(r.checkAndAdd("r:1")).toBe(false);
    expect(r.isPending("r:1")).toBe(false);
    r.begin("r:1");
    expect(r.isPending("r:1")).toBe(true);
    expect(r.checkAndAdd("r:1")).toBe(true);
    const waiting = r.outcomeOf("r:1");
    expect(waiting).toBeInstanceOf(Promise);
    r.end("r:1", true);
    expect(await waiting).toBe(true);
    expect(r.isPending("r:1")).toBe(false);
    expect(r.outcomeOf("r:1")).toBeUndefined();
    expect(seen.has("r:1")).toBe(true);
    expect(forgotten).toEqual([]);
    expect(r.checkAndAdd("r:1")).toBe(true);
  });

  it("failed forgets the key before the waiting duplicates learn it, so the sender's retry is processed", async () => {
    const { r, seen, forgotten } = record();
    r.checkAndAdd("r:2");
    r.begin("r:2");
    const waiting = r.outcomeOf("r:2")?.then((ok) => ({ ok, stillSeen: seen.has("r:2") }));
    r.end("r:2", false);
    expect(await waiting).toEqual({ ok: false, stillSeen: false });
    expect(forgotten).toEqual(["r:2"]);
    expect(r.isPending("r:2")).toBe(false);
    expect(r.checkAndAdd("r:2")).toBe(false);
  });

  it("keys are independent, and ending a key that is not pending only applies the outcome to the store", () => {
    const { r, forgotten } = record();
    r.begin("a:1");
    r.begin("b:1");
    r.end("b:1", true);
    expect(r.isPending("a:1")).toBe(true);
    expect(r.isPending("b:1")).toBe(false);
    r.end("c:1", false);
    expect(forgotten).toEqual(["c:1"]);
  });
  it("with a shared store, tells it where a delivery begins and succeeds, and gives a duplicate the outcome of one under way on another instance", async () => {
    const told: string[] = [];
    const elsewhere = Promise.resolve(false);
    const r = createIdempotencyRecord({
      checkAndAdd: () => true,
      forget: (key) => told.push(`forget ${key}`),
      begin: (key) => told.push(`begin ${key}`),
      delivered: (key) => told.push(`delivered ${key}`),
      stopped: (key) => told.push(`stopped ${key}`),
      elsewhere: (key) => (key === "r:remote" ? elsewhere : undefined),
    });
    r.begin("r:1");
    r.end("r:1", true);
    r.begin("r:2");
    r.end("r:2", false);
    // Stopped (the gateway's stop ended its wait): the other instances are told before the key is forgotten,
    // and a duplicate waiting here learns it.
    r.begin("r:3");
    const waiting = r.outcomeOf("r:3");
    r.end("r:3", "stopped");
    expect(await waiting).toBe("stopped");
    expect(told).toEqual([
      "begin r:1",
      "delivered r:1",
      "begin r:2",
      "forget r:2",
      "begin r:3",
      "stopped r:3",
      "forget r:3",
    ]);
    expect(r.outcomeOf("r:remote")).toBe(elsewhere);
    expect(r.outcomeOf("r:other")).toBeUndefined();
  });

  it("with a shared store, a duplicate whose check answers only after the delivery begun meanwhile failed waits for it: never delivered twice", async () => {
    const told: string[] = [];
    const answers: Array<(duplicate: boolean) => void> = [];
    const r = createIdempotencyRecord({
      checkAndAdd: () => new Promise<boolean>((resolve) => answers.push(resolve)),
      forget: (key) => told.push(`forget ${key}`),
    });
    const original = r.checkAndAdd("r:1");
    const copy = r.checkAndAdd("r:1");
    const late = r.checkAndAdd("r:1");
    answers[0]?.(false);
    expect(await original).toBe(false);
    r.begin("r:1");
    r.end("r:1", false);
    // The store saw the key forgotten and recorded it anew for the copy; the third is a duplicate of that.
    answers[1]?.(false);
    answers[2]?.(true);
    expect(await copy).toBe(true);
    expect(await late).toBe(true);
    expect(told).toEqual(["forget r:1", "forget r:1"]);
    expect(await r.outcomeOf("r:1")).toBe(false);
    expect(await r.outcomeOf("r:1")).toBe(false);
    // Handed to those two only: a later check is the store's word alone.
    expect(r.outcomeOf("r:1")).toBeUndefined();
    const retry = r.checkAndAdd("r:1");
    answers[3]?.(false);
    expect(await retry).toBe(false);
  });
});
