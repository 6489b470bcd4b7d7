import { describe, expect, it } from "vitest";
import { deliveriesTable } from "../../../src/cli/webhook/deliveries.js";
import { historyHooks } from "../../../src/gateway/deliveryHistoryHooks.js";
import {
  NOT_RECORDED_ANSWERS_MAX,
  NOT_RECORDED_PERIOD_MS,
  REFUSED_RECORD_REFILL_MS,
  REFUSED_RECORDS_BURST,
  refusedRecordAllowance,
  SHARED_RECORDS_BURST,
  SHARED_REFILL_MS,
  SUMMARIES_PER_PERIOD,
} from "../../../src/gateway/refusedRecordAllowance.js";
import {
  type HistoryRecord,
  historyLine,
  type NotRecordedRecord,
  summarizeHistory,
} from "../../../src/io/stores/deliveryHistory.js";
import type { Outcome } from "../../../src/streams/types.js";
import { fakeClock } from "../../helpers/gateway.js";

const HEAD = { method: "POST", path: "/webhooks/github", headers: { "x-github-delivery": "g-1" } };
const UNSIGNED: Outcome = { status: 401, body: { error: "Invalid signature" } };
const SPENT: Outcome = { status: 429, body: { error: "Rate limit exceeded" } };
const ACCEPTED: Outcome = { status: 202, body: { status: "accepted", delivery_id: "ok-1" } };
const NO_MATCH = "x-hub-signature-256 does not match";

function capped() {
  const clock = fakeClock(Date.parse("2026-11-22T12:00:00Z"));
  const records: HistoryRecord[] = [];
  let closed = false;
  const writer = {
    record: (r: HistoryRecord) => records.push(r),
    flush: () => {},
    close: () => (closed = true),
  };
  const hooks = historyHooks(writer, clock.now, undefined, clock);
  const send = (route: string, answer: Outcome, times = 1, reason?: string) => {
    for (let i = 0; i < times; i++) hooks.request(route, HEAD, undefined, answer, reason);
  };
  const of = (kind: HistoryRecord["kind"]) => records.filter((r) => r.kind === kind);
  return { clock, records, hooks, send, of, closed: () => closed };
}

describe("delivery history: refused requests past a route's allowance are counted, not recorded one by one", () => {
  it("records a burst whole, counts the rest, and writes their count once the period ends", () => {
    const { clock, send, of, records } = capped();
    send("github", UNSIGNED, 30, NO_MATCH);
    send("github", SPENT, 1200);
    expect(of("request")).toHaveLength(REFUSED_RECORDS_BURST);
    expect(of("not_recorded")).toHaveLength(0);
    clock.advance(NOT_RECORDED_PERIOD_MS);
    const [summary] = of("not_recorded") as NotRecordedRecord[];
    expect(summary).toEqual({
      kind: "not_recorded",
      id: "-",
      at: "2026-11-22T12:01:00.000Z",
      route: "github",
      since: "2026-11-22T12:00:00.000Z",
      count: 1210,
      // The most frequent first.
      answers: [
        { status: 429, outcome: "Rate limit exceeded", count: 1200 },
        { status: 401, outcome: "Invalid signature", reason: NO_MATCH, count: 10 },
      ],
      others: undefined,
    });
    expect(clock.pendingTimers()).toBe(0);
    // Its line reads back as the record (the undefined `others` left out).
    expect(JSON.parse(historyLine(summary as NotRecordedRecord))).toEqual({
      ...summary,
      others: undefined,
    });
    expect(records).toHaveLength(REFUSED_RECORDS_BURST + 1);
  });

  it("never caps accepted, ignored, duplicate or delivered requests, nor a direct delivery's 502; they write the count first", () => {
    const { clock, send, of, records } = capped();
    send("github", UNSIGNED, REFUSED_RECORDS_BURST + 5);
    clock.advance(1000);
    send("github", ACCEPTED, 50);
    send("github", { status: 200, body: { status: "ignored", reason: "filter" } }, 50);
    send("github", { status: 200, body: { status: "duplicate" } }, 50);
    send("github", { status: 200, body: { status: "delivered", delivery_id: "d-1" } }, 50);
    send("github", { status: 502, body: { error: "Delivery failed" }, deliveryId: "d-2" }, 50);
    send("github", { status: 502, body: { error: "Delivery failed" } }, 50);
    expect(of("request")).toHaveLength(REFUSED_RECORDS_BURST + 300);
    // Written before the first of them, so the listing shows the refusals before the accepted request.
    const at = records.findIndex((r) => r.kind === "not_recorded");
    expect(records[at]).toMatchObject({ count: 5, at: "2026-11-22T12:00:01.000Z" });
    expect(records[at + 1]).toMatchObject({ kind: "request", status: 202 });
    expect(clock.pendingTimers()).toBe(0);
    clock.advance(NOT_RECORDED_PERIOD_MS);
    expect(of("not_recorded")).toHaveLength(1);
  });

  it("refills one record a minute on the clock that is never set, up to the burst", () => {
    const { clock, send, of } = capped();
    send("github", SPENT, REFUSED_RECORDS_BURST + 1);
    clock.advance(REFUSED_RECORD_REFILL_MS - 1);
    send("github", SPENT);
    expect(of("request")).toHaveLength(REFUSED_RECORDS_BURST);
    clock.advance(1);
    send("github", SPENT, 2);
    expect(of("request")).toHaveLength(REFUSED_RECORDS_BURST + 1);
    // A step of the wall clock refills nothing.
    clock.step(24 * 60 * 60 * 1000);
    send("github", SPENT);
    expect(of("request")).toHaveLength(REFUSED_RECORDS_BURST + 1);
    // An hour later the allowance is full again: a burst, no more.
    clock.advance(60 * REFUSED_RECORD_REFILL_MS);
    send("github", SPENT, 3 * REFUSED_RECORDS_BURST);
    expect(of("request")).toHaveLength(2 * REFUSED_RECORDS_BURST + 1);
    // A sustained flood writes about two records a minute: one recorded, one count.
    const before = of("request").length + of("not_recorded").length;
    for (let minute = 0; minute < 60; minute++) {
      send("github", SPENT, 1000);
      clock.advance(REFUSED_RECORD_REFILL_MS);
    }
    expect(of("request").length + of("not_recorded").length - before).toBeLessThanOrEqual(2 * 60 + 1);
  });

  it("keeps each route's allowance apart", () => {
    const { send, of } = capped();
    send("github", UNSIGNED, 100);
    send("stripe", UNSIGNED, 3);
    expect(of("request").filter((r) => r.route === "stripe")).toHaveLength(3);
  });

  it("a flood of many routes at once is bounded by the allowance all routes share, and their counts are summed up less often", () => {
    const clock = fakeClock();
    const summaries: string[] = [];
    const allowance = refusedRecordAllowance(clock, (route) => summaries.push(route));
    // 2,500 routes, 20 refused requests each, at once: each route's own allowance would record 50,000.
    let recorded = 0;
    for (let i = 0; i < 2500; i++)
      for (let n = 0; n < REFUSED_RECORDS_BURST; n++)
        if (allowance.admit(`route-${i}`, 401, "Invalid signature", undefined)) recorded += 1;
    expect(recorded).toBe(SHARED_RECORDS_BURST);
    // The routes counting at once write their summaries over a longer period, not all in the first minute.
    clock.advance(NOT_RECORDED_PERIOD_MS);
    expect(summaries.length).toBeLessThanOrEqual(SUMMARIES_PER_PERIOD);
    // The shared allowance refills one request per SHARED_REFILL_MS: a fresh route's burst is recorded that far.
    let fresh = 0;
    for (let n = 0; n < REFUSED_RECORDS_BURST; n++)
      if (allowance.admit("fresh", 401, "Invalid signature", undefined)) fresh += 1;
    expect(fresh).toBe(NOT_RECORDED_PERIOD_MS / SHARED_REFILL_MS);
    allowance.close();
  });

  it("does not keep the allowance of every route ever refused: subscriptions made and removed over days do not add up", () => {
    const clock = fakeClock();
    const counted: string[] = [];
    const allowance = refusedRecordAllowance(clock, (route) => counted.push(route));
    const refuse = (route: string) => allowance.admit(route, 401, "Invalid signature", undefined);
    // 10,000 subscriptions over ~8 days, each refused once (a sender's first try with an old secret): 50 an
    // hour, within what the allowance all routes share records.
    for (let i = 0; i < 10_000; i++) {
      refuse(`sub-${i}`);
      if (i % 50 === 49) clock.advance(REFUSED_RECORD_REFILL_MS * 60);
    }
    expect(allowance.routesKept()).toBeLessThanOrEqual(1024);
    // A route whose allowance is spent keeps it through the sweeps that new routes bring: still counted.
    for (let i = 0; i < REFUSED_RECORDS_BURST; i++) expect(refuse("flooded")).toBe(true);
    expect(refuse("flooded")).toBe(false);
    for (let i = 0; i < 2000; i++) refuse(`late-${i}`);
    expect(refuse("flooded")).toBe(false);
    allowance.close();
    expect(counted.filter((route) => !route.startsWith("late-"))).toEqual(["flooded"]);
    // The late routes came at once: the allowance all routes share (refilled over the last hour) recorded
    // the first 180 of them one by one, and counted the others.
    expect(counted).toHaveLength(1 + 2000 - (SHARED_RECORDS_BURST - REFUSED_RECORDS_BURST));
  });

  it("names at most a few kinds of answer and sums up the others; the stop writes an open count", () => {
    const { clock, send, of, hooks, closed } = capped();
    send("github", SPENT, REFUSED_RECORDS_BURST);
    for (let status = 400; status < 400 + NOT_RECORDED_ANSWERS_MAX + 3; status++)
      send("github", { status, body: { error: `E${status}` } }, 2);
    expect(of("not_recorded")).toHaveLength(0);
    hooks.close();
    expect(closed()).toBe(true);
    expect(clock.pendingTimers()).toBe(0);
    const [summary] = of("not_recorded") as NotRecordedRecord[];
    expect(summary?.answers).toHaveLength(NOT_RECORDED_ANSWERS_MAX);
    expect(summary).toMatchObject({ count: 2 * (NOT_RECORDED_ANSWERS_MAX + 3), others: 6 });
  });

  it("svc webhook deliveries shows the count as a row of its own, apart from the refused requests of ID -", () => {
    const { clock, send, records } = capped();
    send("github", SPENT, REFUSED_RECORDS_BURST + 1234);
    clock.advance(NOT_RECORDED_PERIOD_MS);
    const summaries = summarizeHistory(records);
    expect(summaries).toHaveLength(REFUSED_RECORDS_BURST + 1);
    expect(summaries[0]?.notRecorded).toMatchObject({ count: 1234 });
    const row = deliveriesTable(summaries.slice(0, 1), "").split("\n")[1];
    expect(row).toContain(
      "1,234 more refused requests since 2026-11-22T12:00:00Z not recorded one by one: 429 Rate limit exceeded ×1,234",
    );
    expect(row).toMatch(/^2026-11-22T12:01:00Z\s+-\s+github\s+-\s+-\s+-\s+-\s+1,234/);
  });
});
