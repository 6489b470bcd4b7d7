import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  createHistoryWriter,
  type DeliverySummary,
  HISTORY_RETENTION_MS,
  historyLine,
  readHistory,
  summarizeHistory,
} from "../../../src/io/stores/deliveryHistory.js";
import { type DeliveryFilter, filteredDeliveries } from "../../../src/io/stores/filteredDeliveries.js";
import {
  HISTORY_IDS,
  HISTORY_ROUTES,
  HISTORY_T0,
  historyIso,
  historyRecordArbs,
} from "../../helpers/historyArbitraries.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome | undefined;
afterEach(() => home?.cleanup());

const T0 = HISTORY_T0;
const iso = historyIso;

const ids = HISTORY_IDS;
const routes = HISTORY_ROUTES;
const answers: readonly [number, string][] = [
  [202, "accepted"],
  [202, "coalesced"],
  [200, "delivered"],
  [502, "Delivery failed"],
  [200, "duplicate"],
  [401, "Invalid signature"],
  [200, "ignored"],
  [429, "Rate limit exceeded"],
];
const ageArb = fc.integer({ min: 0, max: 6 });

// Requests of every answer summarizeHistory tells apart, runs, deliveries and counts of refused requests,
// of few routes and IDs (so they share keys) and a few seconds apart (so time filters cut among them).
const lineArb: fc.Arbitrary<string> = fc.oneof(
  ...historyRecordArbs({ answers, requestAge: ageArb, recordAge: ageArb }),
  fc
    .record({ route: fc.constantFrom(...routes), age: ageArb, answer: fc.constantFrom(...answers) })
    .map(({ route, age, answer: [status, outcome] }) =>
      historyLine({
        kind: "not_recorded",
        id: "-",
        at: iso(T0 - age * 1000),
        route,
        since: iso(T0 - 10_000),
        count: 3,
        answers: [{ status, outcome, count: 3 }],
      }),
    ),
  // Lines the readers skip or read as they find them: not JSON, cut short, past the retention, of an
  // unknown kind, written by hand (other key order, escapes).
  fc.constantFrom(
    "not json",
    '{"kind":"requ',
    "",
    historyLine({
      kind: "request",
      id: "a",
      at: iso(T0 - HISTORY_RETENTION_MS - 1),
      route: "pr",
      status: 202,
      outcome: "accepted",
    }),
    '{"kind":"later","id":"a","at":"2026-11-20T10:00:00.000Z","route":"pr"}',
    '{"id":"b","kind":"run","route":"pr","at":"2026-11-20T10:00:00.000Z","outcome":"ok"}',
    '{"kind":"request","id":"\\u0061","at":"2026-11-20T10:00:00.000Z","route":"ci","status":202,"outcome":"accepted"}',
    // In the gateway's order, with escapes where the line's head is read without parsing it.
    '{"kind":"request","id":"b","at":"2026-11-20T09:59:59.000\\u005a","route":"\\u0070r","status":401,"outcome":"Invalid signature"}',
    '{"kind":"request","id":"a","at":"2026-11-20T10:00:00.000Z","route":"ci","status":200,"outcome":"\\u0064uplicate"}',
    '{"kind":"run","id":"\\u0062","at":"2026-11-20T09:59:58.000Z","route":"c\\u0069","outcome":"ok"}',
  ),
);

const filterArb: fc.Arbitrary<DeliveryFilter> = fc.record(
  {
    route: fc.constantFrom(...routes, "none"),
    id: fc.constantFrom(...ids).map((want) => (id: string) => id === want),
    status: fc.oneof(
      fc.constantFrom(200, 202, 401, 429, 502, 404).map((code) => ({ code })),
      fc.constantFrom(2, 4, 5).map((c) => ({ class: c })),
      fc
        .constantFrom("accepted", "duplicate", "ignored", "delivered", "coalesced")
        .map((outcome) => ({ outcome })),
    ),
    since: ageArb.map((age) => T0 - age * 1000),
    until: ageArb.map((age) => T0 - age * 1000),
  },
  { requiredKeys: [] },
);

/** The naive filter, written out: every record read, summarized, each row checked, cut. */
function naive(dir: string, limit: number, filter: DeliveryFilter): DeliverySummary[] {
  const status = (s: number, outcome: string) => {
    const f = filter.status;
    if (f === undefined) return true;
    if ("code" in f) return s === f.code;
    if ("class" in f) return Math.floor(s / 100) === f.class;
    return outcome.toLowerCase() === f.outcome;
  };
  return summarizeHistory(readHistory(dir, T0))
    .filter(
      (s) =>
        (filter.route === undefined || s.route === filter.route) &&
        (filter.id === undefined || filter.id(s.id)) &&
        (filter.since === undefined || Date.parse(s.at) >= filter.since) &&
        (filter.until === undefined || Date.parse(s.at) <= filter.until) &&
        (filter.status === undefined ||
          (s.request !== undefined
            ? status(s.request.status, s.request.outcome)
            : s.notRecorded !== undefined && s.notRecorded.answers.some((a) => status(a.status, a.outcome)))),
    )
    .slice(0, limit);
}

function historyIn(previous: string | undefined, current: string): string {
  home = tempHome();
  const dir = join(home.dir, "deliveries");
  mkdirSync(dir, { recursive: true });
  if (previous !== undefined) writeFileSync(join(dir, "history.1.jsonl"), previous);
  writeFileSync(join(dir, "history.jsonl"), current);
  return dir;
}

describe("svc webhook deliveries' filters", () => {
  it("list exactly what filtering the whole history's rows lists, for any history, filters, limit and read size", () => {
    fc.assert(
      fc.property(
        fc.array(lineArb, { maxLength: 40 }),
        fc.nat(),
        fc.boolean(),
        fc.integer({ min: 1, max: 300 }),
        fc.integer({ min: 1, max: 8 }),
        filterArb,
        (all, split, previous, chunkBytes, limit, filter) => {
          const at = previous ? split % (all.length + 1) : 0;
          const text = (part: readonly string[]) => part.map((line) => `${line}\n`).join("");
          const dir = historyIn(previous ? text(all.slice(0, at)) : undefined, text(all.slice(at)));
          try {
            expect(filteredDeliveries(dir, limit, filter, T0, { chunkBytes })).toEqual(
              naive(dir, limit, filter),
            );
          } finally {
            home?.cleanup();
            home = undefined;
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it("reads one generation whole while the gateway appends and rotates the files under it", () => {
    home = tempHome();
    const dir = join(home.dir, "deliveries");
    const rethrow = (err: unknown) => {
      throw err;
    };
    const at = iso(T0);
    const first = createHistoryWriter(dir, rethrow, () => T0, 400);
    first.record({ kind: "request", id: "x", at, route: "pr", status: 202, outcome: "accepted" });
    first.record({ kind: "run", id: "x", at, route: "pr", outcome: "ok" });
    first.record({ kind: "request", id: "y", at, route: "pr", status: 401, outcome: "Invalid signature" });
    first.close();
    // While the filter is asked of the first line read, the gateway writes enough to rotate twice: the
    // files read are gone from their paths by the time the run of x is looked up.
    let written = false;
    const id = (each: string) => {
      if (!written) {
        written = true;
        const gateway = createHistoryWriter(dir, rethrow, () => T0, 400);
        for (let n = 0; n < 12; n++) {
          gateway.record({ kind: "request", id: "x", at, route: "pr", status: 202, outcome: "accepted" });
          gateway.flush();
        }
        gateway.close();
      }
      return each === "x";
    };
    const rows = filteredDeliveries(dir, 5, { id }, T0, { chunkBytes: 64 });
    // Both files read were rotated away (y is no longer in the history).
    expect(readHistory(dir, T0).some((r) => r.id === "y")).toBe(false);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: "x", request: { outcome: "accepted" }, run: { outcome: "ok" } });
  });

  it("parse only the lines whose head may match, and read escaped values in a head as their reader does", () => {
    // A route, ID and outcome written with escapes (another writer's JSON, an edit): the same values.
    const escaped = [
      '{"kind":"request","id":"\\u0078-1","at":"2026-11-20T09:59:59.000Z","route":"\\u0070r","status":200,"outcome":"\\u0064elivered"}',
      '{"kind":"delivery","id":"x-1","at":"2026-11-20T09:59:59.000Z","route":"p\\u0072","platform":"slack","outcome":"ok"}',
    ];
    const others = Array.from({ length: 500 }, (_, n) =>
      historyLine({
        kind: "request",
        id: `o-${n}`,
        at: iso(T0 - 1000),
        route: "ci",
        status: 202,
        outcome: "accepted",
        payload: '{"action":"opened"}',
        payload_encoding: "json",
      }),
    );
    const dir = historyIn(undefined, [...escaped, ...others].map((line) => `${line}\n`).join(""));
    const parse = vi.spyOn(JSON, "parse");
    try {
      const rows = filteredDeliveries(dir, 20, { route: "pr", status: { outcome: "delivered" } }, T0);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        id: "x-1",
        route: "pr",
        request: { status: 200, outcome: "delivered" },
        delivery: { outcome: "ok" },
      });
      // The 500 lines of route ci are judged by their heads, never parsed.
      expect(parse.mock.calls.length).toBeLessThan(20);
    } finally {
      parse.mockRestore();
    }
    expect(filteredDeliveries(dir, 20, { id: (id) => id === "x-1" }, T0)).toHaveLength(1);
  });
});
