import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import {
  createHistoryWriter,
  HISTORY_RETENTION_MS,
  type HistoryRecord,
  historyLine,
  historyOfIds,
  type RequestRecord,
  readHistory,
  recentDeliveries,
  summarizeHistory,
} from "../../../src/io/stores/deliveryHistory.js";
import { HISTORY_IDS, HISTORY_T0, historyIso, historyRecordArbs } from "../../helpers/historyArbitraries.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home?.cleanup());

const T0 = HISTORY_T0;
const iso = historyIso;

/** The whole-file read the readers replace: every record, summarized, filtered, cut. */
const wholeList = (dir: string, limit: number, route: string | undefined) =>
  summarizeHistory(readHistory(dir, T0))
    .filter((s) => route === undefined || s.route === route)
    .slice(0, limit);

function historyIn(previous: string | undefined, current: string | undefined): string {
  home = tempHome();
  const dir = join(home.dir, "deliveries");
  mkdirSync(dir, { recursive: true });
  if (previous !== undefined) writeFileSync(join(dir, "history.1.jsonl"), previous);
  if (current !== undefined) writeFileSync(join(dir, "history.jsonl"), current);
  return dir;
}

const lines = (records: readonly HistoryRecord[]) => records.map((r) => `${historyLine(r)}\n`).join("");

const request = (id: string, extra: Partial<RequestRecord> = {}): RequestRecord => ({
  kind: "request",
  id,
  at: iso(T0),
  route: "pr",
  status: 202,
  outcome: "accepted",
  ...extra,
});

// Requests of every answer summarizeHistory tells apart, runs and deliveries, of few routes and IDs (so
// they share keys: retries, runs of another instance's requests, deliveries before their answer).
const ids = HISTORY_IDS;
const answers: readonly [number, string][] = [
  [202, "accepted"],
  [202, "coalesced"],
  [200, "delivered"],
  [502, "delivery_failed"],
  [200, "duplicate"],
  [401, "unauthorized"],
  [200, "ignored"],
];
const recordArb: fc.Arbitrary<string> = fc.oneof(
  ...historyRecordArbs({
    answers,
    requestAge: fc.integer({ min: 0, max: 3 }),
    recordAge: fc.constant(0),
  }),
  // Lines readHistory skips or reads as it finds them: not JSON, cut short, past the retention, of an
  // unknown kind, written by hand (other key order, escapes, spaces).
  fc.constantFrom(
    "not json",
    '{"kind":"requ',
    "",
    "null",
    historyLine(request("a", { at: iso(T0 - HISTORY_RETENTION_MS - 1) })),
    '{"kind":"later","id":"a","at":"2026-11-20T10:00:00.000Z","route":"pr"}',
    '{"id":"b","kind":"run","route":"pr","at":"2026-11-20T10:00:00.000Z","outcome":"ok"}',
    '{"kind":"request","id":"\\u0061","at":"2026-11-20T10:00:00.000Z","route":"ci","status":202,"outcome":"accepted"}',
    '{"kind":"delivery", "id":"b","at":"2026-11-20T10:00:00.000Z","route":"ci","platform":"x","outcome":"ok"}',
  ),
);

const historyArb = fc.record({
  lines: fc.array(recordArb, { maxLength: 40 }),
  split: fc.nat(),
  previous: fc.boolean(),
  // The last line of the current file as being written: without its line break.
  open: fc.boolean(),
  chunkBytes: fc.integer({ min: 1, max: 300 }),
});

type HistoryCase = typeof historyArb extends fc.Arbitrary<infer T> ? T : never;

function writeHistory({ lines: all, split, previous, open }: HistoryCase): string {
  const at = previous ? split % (all.length + 1) : 0;
  const text = (part: readonly string[]) => part.map((line) => `${line}\n`).join("");
  const current = text(all.slice(at));
  return historyIn(
    previous ? text(all.slice(0, at)) : undefined,
    open && current.endsWith("\n") ? current.slice(0, -1) : current,
  );
}

describe("the delivery history read newest first", () => {
  it("lists exactly what the whole-file read lists, for any history, route filter, limit and read size", () => {
    fc.assert(
      fc.property(
        historyArb,
        fc.integer({ min: 1, max: 8 }),
        fc.constantFrom(undefined, "pr", "ci", "none"),
        (history, limit, route) => {
          const dir = writeHistory(history);
          try {
            const got = recentDeliveries(dir, limit, route, T0, { chunkBytes: history.chunkBytes });
            expect(got.shown).toEqual(wholeList(dir, limit, route));
            if (got.all !== undefined) expect(got.all).toEqual(summarizeHistory(readHistory(dir, T0)));
            else expect(got.shown).toHaveLength(limit);
          } finally {
            home.cleanup();
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  it("lists exactly what the whole-file read lists when the records of one delivery ID are spread far back", () => {
    // Requests, runs and deliveries of one route and ID among others of IDs of their own: what the rows
    // read first show of it must be what the older ones leave them, or those are looked up.
    const kinds = ["agent", "direct", "duplicate", "run", "delivery", "other"] as const;
    const line = (kind: (typeof kinds)[number], n: number): string => {
      const at = iso(T0);
      switch (kind) {
        case "agent":
          return historyLine(request("a"));
        case "direct":
          return historyLine(request("a", { status: n % 2 === 0 ? 200 : 502, outcome: "delivered" }));
        case "duplicate":
          return historyLine(request("a", { status: 200, outcome: "duplicate" }));
        case "run":
          return historyLine({
            kind: "run",
            id: "a",
            at,
            route: "pr",
            outcome: n % 2 === 0 ? "ok" : "failed",
          });
        case "delivery":
          return historyLine({
            kind: "delivery",
            id: "a",
            at,
            route: "pr",
            platform: `p${n}`,
            outcome: "ok",
          });
        case "other":
          return historyLine(request(`other-${n}`));
      }
    };
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...kinds), { maxLength: 30 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 200 }),
        (picked, limit, chunkBytes) => {
          const dir = historyIn(undefined, picked.map((kind, n) => `${line(kind, n)}\n`).join(""));
          try {
            expect(recentDeliveries(dir, limit, undefined, T0, { chunkBytes }).shown).toEqual(
              wholeList(dir, limit, undefined),
            );
          } finally {
            home.cleanup();
          }
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("looks up exactly the records of the IDs asked for, oldest first, as the whole-file read has them", () => {
    fc.assert(
      fc.property(historyArb, fc.subarray(ids), (history, wanted) => {
        const dir = writeHistory(history);
        try {
          const got = historyOfIds(dir, (id) => wanted.includes(id), T0, { chunkBytes: history.chunkBytes });
          expect(got).toEqual(readHistory(dir, T0).filter((r) => wanted.includes(r.id)));
        } finally {
          home.cleanup();
        }
      }),
      { numRuns: 300 },
    );
  });

  it("a record spanning reads, and a character split between them, are read whole", () => {
    const records = [request("ü€😀-1", { payload: '{"t":"€😀"}', payload_encoding: "json" }), request("x")];
    const dir = historyIn(undefined, lines(records));
    for (const chunkBytes of [1, 2, 3, 5, 7, 64]) {
      expect(recentDeliveries(dir, 2, undefined, T0, { chunkBytes }).shown).toEqual(
        wholeList(dir, 2, undefined),
      );
      expect(historyOfIds(dir, (id) => id.startsWith("ü"), T0, { chunkBytes })).toEqual([records[0]]);
    }
  });

  it("a request in history.1.jsonl keeps its run and delivery in history.jsonl", () => {
    const dir = historyIn(
      lines([request("a"), request("b")]),
      lines([
        { kind: "run", id: "a", at: iso(T0), route: "pr", outcome: "ok" },
        { kind: "delivery", id: "a", at: iso(T0), route: "pr", platform: "slack", outcome: "ok" },
        request("c"),
      ]),
    );
    const { shown } = recentDeliveries(dir, 3, undefined, T0, { chunkBytes: 16 });
    expect(shown.map((s) => [s.id, s.run?.outcome, s.delivery?.platform])).toEqual([
      ["c", undefined, undefined],
      ["b", undefined, undefined],
      ["a", "ok", "slack"],
    ]);
    expect(historyOfIds(dir, (id) => id === "a", T0).map((r) => r.kind)).toEqual([
      "request",
      "run",
      "delivery",
    ]);
  });

  it("a run shown alone among the newest that belongs to an older request shows on it, as the whole read shows it", () => {
    // The newest records alone show the run of "a" as a run without its request: it is the older one's.
    const dir = historyIn(
      lines([request("a"), ...Array.from({ length: 30 }, (_, i) => request(`old-${i}`))]),
      lines([
        request("new"),
        { kind: "run", id: "a", at: iso(T0), route: "pr", outcome: "failed", error: "boom" },
      ]),
    );
    const { shown } = recentDeliveries(dir, 2, undefined, T0, { chunkBytes: 32 });
    expect(shown).toEqual(wholeList(dir, 2, undefined));
    expect(shown.map((s) => s.id)).toEqual(["new", "old-29"]);
  });

  it("the last line being written, lines that are not JSON and lines past the retention are skipped as the whole read skips them", () => {
    const dir = historyIn(
      `not json\n${historyLine(request("gone", { at: iso(T0 - HISTORY_RETENTION_MS - 1) }))}\n`,
      `${lines([request("a"), request("b")])}{"kind":"requ`,
    );
    expect(recentDeliveries(dir, 5, undefined, T0).shown.map((s) => s.id)).toEqual(["b", "a"]);
    // A last line complete but for its line break is read, as the whole read reads it.
    writeFileSync(join(dir, "history.jsonl"), `${lines([request("a")])}${historyLine(request("c"))}`);
    expect(recentDeliveries(dir, 1, undefined, T0, { chunkBytes: 8 }).shown.map((s) => s.id)).toEqual(["c"]);
    expect(historyOfIds(dir, () => true, T0)).toEqual(readHistory(dir, T0));
  });

  it("a reader the gateway's rotation comes between the opens of the two files still gets one generation whole", () => {
    const named = (prefix: string) => Array.from({ length: 5 }, (_, i) => `${prefix}-${i}`);
    // history.1.jsonl holds a-*, history.jsonl b-*: the next record rotates, as the gateway's next batch
    // would once the reader has opened history.1.jsonl and not yet history.jsonl.
    const rotatingHistory = () => {
      home?.cleanup();
      home = tempHome();
      const dir = join(home.dir, "deliveries");
      const rethrow = (err: unknown) => {
        throw err;
      };
      const write = (batch: readonly string[]) => {
        const writer = createHistoryWriter(dir, rethrow, () => T0, 300);
        for (const id of batch) writer.record(request(id));
        writer.close();
      };
      write(named("a"));
      write(["b-0"]);
      write(named("b").slice(1));
      const gateway = createHistoryWriter(dir, rethrow, () => T0, 300);
      let rotated = false;
      const opened = (name: string) => {
        if (name !== "history.1.jsonl" || rotated) return;
        rotated = true;
        gateway.record(request("c-0"));
        gateway.close();
      };
      return { dir, opened };
    };
    const listed = rotatingHistory();
    expect(
      recentDeliveries(listed.dir, 20, undefined, T0, { opened: listed.opened }).shown.map((s) => s.id),
    ).toEqual([...named("b"), "c-0"].reverse());
    const looked = rotatingHistory();
    expect(historyOfIds(looked.dir, () => true, T0, { opened: looked.opened }).map((r) => r.id)).toEqual([
      ...named("b"),
      "c-0",
    ]);
  });

  it("a history this user may not read, or a directory in a file's place, is refused as the whole read refuses it", () => {
    const dir = historyIn(undefined, undefined);
    expect(recentDeliveries(dir, 3, undefined, T0)).toEqual({ shown: [], all: [] });
    mkdirSync(join(dir, "history.jsonl"));
    const message = `${join(dir, "history.jsonl")}: the delivery history cannot be read (EISDIR: illegal operation on a directory, read) — move away what is in its place: the gateway writes its history there`;
    expect(() => readHistory(dir, T0)).toThrow(message);
    expect(() => recentDeliveries(dir, 3, undefined, T0)).toThrow(message);
    expect(() => historyOfIds(dir, () => true, T0)).toThrow(message);
    if (process.getuid?.() === 0) return;
    const denied = historyIn(lines([request("a")]), undefined);
    chmodSync(join(denied, "history.1.jsonl"), 0o000);
    const refused = `${denied}: this user may not read the delivery history (permission denied)`;
    expect(() => recentDeliveries(denied, 3, undefined, T0)).toThrow(refused);
    expect(() => historyOfIds(denied, () => true, T0)).toThrow(refused);
  });
});
