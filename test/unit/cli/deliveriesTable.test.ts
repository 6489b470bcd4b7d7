import { describe, expect, it } from "vitest";
import {
  COALESCED_NOTE,
  deliveriesTable,
  NO_REQUEST_NOTE,
  SHARED_COALESCED_NOTE,
  SHARED_NO_REQUEST_NOTE,
  SHARED_ROTATED_NOTE,
  shownReason,
  supersededNote,
} from "../../../src/cli/webhook/deliveries.js";
import {
  type DeliverySummary,
  type RequestRecord,
  summarizeHistory,
} from "../../../src/io/stores/deliveryHistory.js";
import { SUPERSEDED_REASON } from "../../../src/streams/stages/dispatch.js";
import { NOT_AMONG_EVENTS, PING_NOT_LISTED } from "../../../src/streams/stages/events.js";

const AT = "2026-11-22T12:00:00.000Z";

function refused(id: string, reason?: string, redeliveryOf?: string): DeliverySummary {
  const request: RequestRecord = {
    kind: "request",
    id,
    at: AT,
    route: "github",
    status: 401,
    outcome: "Invalid signature",
    event: "push",
    ...(reason === undefined ? {} : { reason }),
    ...(redeliveryOf === undefined ? {} : { redelivery_of: redeliveryOf }),
  };
  return { id, at: AT, route: "github", request };
}

/** The NOTE cell of each row: what follows the RUN and DELIVERY cells (both `-` for a refused request). */
const notes = (table: string) =>
  table
    .split("\n")
    .slice(1)
    .map((row) => /401 Invalid signature\s+-\s+-(?:\s+(.*))?$/.exec(row)?.[1] ?? "");

describe("svc webhook deliveries: the NOTE of a refused request", () => {
  it("says why the gateway refused it", () => {
    const table = deliveriesTable(
      [
        refused("d-3", "timestamp is more than 300 s from the server clock"),
        refused("d-2", "x-hub-signature-256 does not match"),
        refused("d-1", "no recognized signature or token header"),
      ],
      "request not in this history",
    );
    expect(notes(table)).toEqual([
      "timestamp is more than 300 s from the server clock",
      "x-hub-signature-256 does not match",
      "no recognized signature or token header",
    ]);
  });

  it("a record written before the reason was kept shows as before: no NOTE, no trailing space", () => {
    const table = deliveriesTable([refused("d-1")], "request not in this history");
    expect(notes(table)).toEqual([""]);
    expect(table).not.toMatch(/ $/m);
    expect(table.split("\n")[1]).toMatch(/\sd-1\s+github\s+push\s+401 Invalid signature\s+-\s+-$/);
  });

  it("a redelivery's refusal names both", () => {
    const table = deliveriesTable(
      [refused("d-2", "x-hub-signature-256 does not match", "d-1")],
      "request not in this history",
    );
    expect(notes(table)).toEqual(["x-hub-signature-256 does not match; redelivery of d-1"]);
  });

  it("control, bidi and zero-width characters in a reason are shown escaped, as an ID's are", () => {
    const table = deliveriesTable(
      [refused("d-\u202e1", "x-evil\u001b[2J\u202e\u200b does not match")],
      "request not in this history",
    );
    expect(table).toContain("d-\\u202e1");
    expect(notes(table)).toEqual(["x-evil\\u001b[2J\\u202e\\u200b does not match"]);
    for (const hidden of ["\u001b", "\u202e", "\u200b"]) expect(table).not.toContain(hidden);
  });
});

function ignored(id: string, event: string | undefined, reason?: string): DeliverySummary {
  const request: RequestRecord = {
    kind: "request",
    id,
    at: AT,
    route: "github",
    status: 200,
    outcome: "ignored",
    ...(event === undefined ? {} : { event }),
    ...(reason === undefined ? {} : { reason }),
  };
  return { id, at: AT, route: "github", request };
}

/** The NOTE cell of each row of ignored requests. */
const ignoredNotes = (table: string) =>
  table
    .split("\n")
    .slice(1)
    .map((row) => /200 ignored\s+-\s+-(?:\s+(.*))?$/.exec(row)?.[1] ?? "");

describe("svc webhook deliveries: the NOTE of an ignored request", () => {
  it("says what ignored it: the route's events (with the recorded event type), a filter, the script", () => {
    const table = deliveriesTable(
      [
        ignored("d-5", "push", NOT_AMONG_EVENTS),
        ignored("d-4", undefined, NOT_AMONG_EVENTS),
        ignored("d-3", "ping", PING_NOT_LISTED),
        ignored("d-2", "issues", "filter action did not match"),
        ignored("d-1", "issues", "script exited with code 1"),
      ],
      "request not in this history",
    );
    expect(ignoredNotes(table)).toEqual([
      "event push is not among the route's events",
      "the request names no event type, and the route takes only its events",
      "event ping is a ping: ignored unless the route's events name it",
      "filter action did not match",
      "script exited with code 1",
    ]);
  });

  it("the event type in the note is the sender's text: its control, bidi and zero-width characters are escaped", () => {
    const table = deliveriesTable(
      [ignored("d-1", "iss\u202eues\u200b\u001b[2J", NOT_AMONG_EVENTS)],
      "request not in this history",
    );
    expect(ignoredNotes(table)).toEqual([
      "event iss\\u202eues\\u200b\\u001b[2J is not among the route's events",
    ]);
    for (const hidden of ["\u001b", "\u202e", "\u200b"]) expect(table).not.toContain(hidden);
  });

  it("a record written before the reason was kept shows as before", () => {
    const table = deliveriesTable([ignored("d-1", "push")], "request not in this history");
    expect(ignoredNotes(table)).toEqual([""]);
    expect(table).not.toMatch(/ $/m);
  });

  it("--json's reason is the NOTE's, unescaped: the events stage's fixed text said with the event type", () => {
    expect(shownReason({ event: "iss\u202eues" }, NOT_AMONG_EVENTS)).toBe(
      "event iss\u202eues is not among the route's events",
    );
    expect(shownReason({ event: "push" }, "filter action did not match")).toBe("filter action did not match");
  });
});

describe("svc webhook deliveries: the NOTE of a coalesced event", () => {
  const coalesced = (id: string): RequestRecord => ({
    kind: "request",
    id,
    at: AT,
    route: "prs",
    status: 202,
    outcome: "coalesced",
    event: "pull_request",
  });

  it("an event its group's later event superseded says where the group's run shows; the latest shows the run", () => {
    const summaries = summarizeHistory([
      coalesced("e-1"),
      coalesced("e-2"),
      coalesced("e-3"),
      { kind: "run", id: "e-3", at: AT, route: "prs", outcome: "ok" },
      { kind: "delivery", id: "e-3", at: AT, route: "prs", platform: "log", outcome: "ok" },
    ]);
    const rows = deliveriesTable(summaries, "request not in this history").split("\n").slice(1);
    expect(rows[0]).toMatch(/\se-3\s+prs\s+pull_request\s+202 coalesced\s+ok\s+log ok$/);
    expect(rows[1]).toMatch(/\se-2\s.*202 coalesced\s+-\s+-\s+(.*)$/);
    expect(rows[1]?.endsWith(COALESCED_NOTE)).toBe(true);
    expect(rows[2]?.endsWith(COALESCED_NOTE)).toBe(true);
  });

  it("with state.backend: redis, the latest event of a group another instance ran says where its run shows, as do the others", () => {
    // The group's run is recorded by the instance that ran it: this history has the events, not the run.
    const summaries = summarizeHistory([coalesced("e-1"), coalesced("e-2")]);
    const rows = deliveriesTable(summaries, SHARED_NO_REQUEST_NOTE, true).split("\n").slice(1);
    for (const row of rows) expect(row.endsWith(SHARED_COALESCED_NOTE)).toBe(true);
    expect(SHARED_COALESCED_NOTE.startsWith(COALESCED_NOTE)).toBe(true);
    // One this instance ran shows its run, as without Redis.
    const ran = summarizeHistory([
      coalesced("e-3"),
      { kind: "run", id: "e-3", at: AT, route: "prs", outcome: "ok" },
      { kind: "delivery", id: "e-3", at: AT, route: "prs", platform: "log", outcome: "ok" },
    ]);
    expect(deliveriesTable(ran, SHARED_NO_REQUEST_NOTE, true).split("\n")[1]).toMatch(
      /\se-3\s+prs\s+pull_request\s+202 coalesced\s+ok\s+log ok$/,
    );
  });

  it("one a run already dispatched superseded says so, naming that run, not that it joined a group (it joined none)", () => {
    const late: RequestRecord = { ...coalesced("e-1"), reason: `${SUPERSEDED_REASON} (e-2)` };
    const summaries = summarizeHistory([
      late,
      { kind: "run", id: "e-2", at: AT, route: "prs", outcome: "ok" },
      coalesced("e-2"),
    ]);
    const rows = deliveriesTable(summaries, "request not in this history").split("\n").slice(1);
    const row = rows.find((r) => /\se-1\s/.test(r));
    expect(row).toMatch(/\se-1\s+prs\s+pull_request\s+202 coalesced\s+-\s+-\s+superseded by/);
    expect(row?.endsWith(supersededNote(`${SUPERSEDED_REASON} (e-2)`, false))).toBe(true);
    expect(supersededNote(`${SUPERSEDED_REASON} (e-2)`, false)).toBe(
      "superseded by a run already dispatched (e-2): its key's group had run an event received after this one, so it joined no group and never runs",
    );
    expect(row).not.toContain(COALESCED_NOTE);
    // With state.backend: redis, where that run is recorded by the instance that ran it.
    const shared = deliveriesTable(summarizeHistory([late]), SHARED_NO_REQUEST_NOTE, true).split("\n")[1];
    expect(shared?.endsWith(supersededNote(`${SUPERSEDED_REASON} (e-2)`, true))).toBe(true);
    expect(shared).toContain("in the history of the instance that ran it");
    // On the instance that ran it, that run is in this history, on its own row: nothing to send the reader on to.
    const ranHere = deliveriesTable(summaries, SHARED_NO_REQUEST_NOTE, true)
      .split("\n")
      .find((r) => /\se-1\s/.test(r));
    expect(ranHere?.endsWith(supersededNote(`${SUPERSEDED_REASON} (e-2)`, false))).toBe(true);
    expect(ranHere).not.toContain("in the history of the instance that ran it");
    // A run of that id on another route is not it.
    const otherRoute = deliveriesTable(
      summarizeHistory([late, { kind: "run", id: "e-2", at: AT, route: "other", outcome: "ok" }]),
      SHARED_NO_REQUEST_NOTE,
      true,
    )
      .split("\n")
      .find((r) => /\se-1\s/.test(r));
    expect(otherRoute).toContain("in the history of the instance that ran it");
    // Its delivery id as sent is shown escaped, as any sender text.
    const odd = { ...coalesced("e-3"), reason: `${SUPERSEDED_REASON} (e\u202e4)` };
    expect(deliveriesTable(summarizeHistory([odd]), "request not in this history")).not.toContain("\u202e");
  });

  it("one superseded by the run of an event a reload kept from grouping (answered accepted, run on its own) says that run was no group's", () => {
    const late: RequestRecord = { ...coalesced("e-1"), reason: `${SUPERSEDED_REASON} (e-2)` };
    const own: RequestRecord = { ...coalesced("e-2"), outcome: "accepted" };
    const row = (records: Parameters<typeof summarizeHistory>[0]) =>
      deliveriesTable(summarizeHistory(records), "request not in this history")
        .split("\n")
        .find((r) => /\se-1\s/.test(r));
    const solo = row([late, { kind: "run", id: "e-2", at: AT, route: "prs", outcome: "ok" }, own]);
    expect(solo?.endsWith(supersededNote(`${SUPERSEDED_REASON} (e-2)`, false, "own"))).toBe(true);
    expect(supersededNote(`${SUPERSEDED_REASON} (e-2)`, false, "own")).toBe(
      "superseded by a run already dispatched (e-2): a run of its key had been made of an event received after this one (that event's own run: a reload kept it from grouping), so it joined no group and never runs",
    );
    expect(solo).not.toContain("group had run");
    // That run's request not shown (rotated out, or left out by a filter): which it was is not said.
    const unknown = row([late]);
    expect(unknown?.endsWith(supersededNote(`${SUPERSEDED_REASON} (e-2)`, false, "unknown"))).toBe(true);
    expect(unknown).toMatch(
      /: a run of its key had been made of an event received after this one, so it joined no group and never runs$/,
    );
    // An accepted request of that id on another route is not it.
    const otherRoute = row([late, { ...own, route: "other" }]);
    expect(otherRoute?.endsWith(supersededNote(`${SUPERSEDED_REASON} (e-2)`, false, "unknown"))).toBe(true);
  });

  it("one superseded by the run of an ID first answered 503 and then, retried, run: the note reads how the retry that ran was answered, never the 503", () => {
    const at = (s: number) => `2026-11-22T12:00:0${s}.000Z`;
    const full: RequestRecord = {
      ...coalesced("e-2"),
      at: at(1),
      status: 503,
      outcome: "Agent run queue is full",
    };
    const row = (records: Parameters<typeof summarizeHistory>[0]) =>
      deliveriesTable(summarizeHistory(records), "request not in this history")
        .split("\n")
        .find((r) => /\se-1\s/.test(r));
    const late: RequestRecord = { ...coalesced("e-1"), at: at(4), reason: `${SUPERSEDED_REASON} (e-2)` };
    const ranOf = { kind: "run", id: "e-2", at: at(3), route: "prs", outcome: "ok" } as const;
    // The retry coalesced: its group's run.
    const grouped = row([full, { ...coalesced("e-2"), at: at(2) }, ranOf, late]);
    expect(grouped?.endsWith(supersededNote(`${SUPERSEDED_REASON} (e-2)`, false, "group"))).toBe(true);
    expect(grouped).toContain("its key's group had run an event received after this one");
    // The retry accepted: its own run.
    const own = row([full, { ...coalesced("e-2"), at: at(2), outcome: "accepted" }, ranOf, late]);
    expect(own?.endsWith(supersededNote(`${SUPERSEDED_REASON} (e-2)`, false, "own"))).toBe(true);
    // Only the 503 shown: which run it was is not said.
    const refusedOnly = row([full, late]);
    expect(refusedOnly?.endsWith(supersededNote(`${SUPERSEDED_REASON} (e-2)`, false, "unknown"))).toBe(true);
  });

  it("a pending group's events all say it, a redelivery naming what it repeats too", () => {
    const redelivered: RequestRecord = { ...coalesced("r-1"), redelivery_of: "e-1" };
    const rows = deliveriesTable(summarizeHistory([redelivered]), "request not in this history").split("\n");
    expect(rows[1]?.endsWith(`${COALESCED_NOTE}; redelivery of e-1`)).toBe(true);
  });
});

describe("svc webhook deliveries: the NOTE of a failed run or delivery", () => {
  const accepted = (
    id: string,
    run?: { outcome: "ok" | "failed" | "dropped"; error?: string },
    delivery?: { outcome: "ok" | "failed"; error?: string },
  ): DeliverySummary => ({
    id,
    at: AT,
    route: "github",
    request: {
      kind: "request",
      id,
      at: AT,
      route: "github",
      status: 202,
      outcome: "accepted",
      event: "push",
    },
    ...(run === undefined ? {} : { run: { kind: "run", id, at: AT, route: "github", ...run } }),
    ...(delivery === undefined
      ? {}
      : { delivery: { kind: "delivery", id, at: AT, route: "github", platform: "telegram", ...delivery } }),
  });
  const lastCell = (table: string) =>
    table
      .split("\n")
      .slice(1)
      .map((row) => /telegram (?:ok|failed)(?:\s+(.*))?$/.exec(row)?.[1] ?? "");

  it("says why each failed, the run's first, then the delivery's; an older record without why shows none", () => {
    const table = deliveriesTable(
      [
        accepted(
          "d-4",
          { outcome: "ok" },
          { outcome: "failed", error: "telegram: sendMessage: HTTP 400 — chat not found" },
        ),
        accepted("d-3", { outcome: "failed", error: "model endpoint answered HTTP 500" }, { outcome: "ok" }),
        accepted(
          "d-2",
          { outcome: "failed", error: "model endpoint answered HTTP 500" },
          { outcome: "failed", error: "telegram: sendMessage: HTTP 502" },
        ),
        accepted("d-1", { outcome: "failed" }, { outcome: "failed" }),
      ],
      "request not in this history",
    );
    expect(lastCell(table)).toEqual([
      "delivery failed: telegram: sendMessage: HTTP 400 — chat not found",
      "run failed: model endpoint answered HTTP 500",
      "run failed: model endpoint answered HTTP 500; delivery failed: telegram: sendMessage: HTTP 502",
      "",
    ]);
  });

  it("an event of a cron_job route dropped at its turn in the queue (its job paused meanwhile): no run, why in its NOTE", () => {
    const why = "cron_job nightly is paused; event dropped";
    const [summary] = summarizeHistory([
      { kind: "request", id: "q-2", at: AT, route: "f", status: 202, outcome: "accepted", event: "push" },
      { kind: "run", id: "q-2", at: AT, route: "f", outcome: "dropped", error: why },
    ]);
    const row = deliveriesTable([summary as DeliverySummary], "request not in this history").split("\n")[1];
    expect(row).toMatch(new RegExp(`\\sq-2\\s+f\\s+push\\s+202 accepted\\s+-\\s+-\\s+${why}$`));
  });

  it("an error's control and bidi characters are shown escaped", () => {
    const table = deliveriesTable(
      [accepted("d-1", { outcome: "failed", error: "bad\u001b[2J\u202e" }, { outcome: "ok" })],
      "request not in this history",
    );
    expect(lastCell(table)).toEqual(["run failed: bad\\u001b[2J\\u202e"]);
  });
});

describe("svc webhook deliveries: the NOTE of a duplicate", () => {
  const duplicate: RequestRecord = {
    kind: "request",
    id: "dup-1",
    at: AT,
    route: "github",
    status: 200,
    outcome: "duplicate",
    event: "push",
  };
  it("says how to run it again; with state.backend: redis, on the instance that took it, which keeps its payload", () => {
    const summaries = summarizeHistory([duplicate]);
    const local = deliveriesTable(summaries, "request not in this history").split("\n")[1];
    expect(local?.endsWith("svc webhook redeliver dup-1 runs it again")).toBe(true);
    const shared = deliveriesTable(summaries, SHARED_NO_REQUEST_NOTE, true).split("\n")[1];
    expect(
      shared?.endsWith(
        "svc webhook redeliver dup-1 runs it again (on the instance that took it: it keeps the payload)",
      ),
    ).toBe(true);
  });
});

describe("svc webhook deliveries: a run without its request", () => {
  // Within the retention: a run of a request received before it is told apart (below).
  const RECENT = new Date(Date.now() - 60_000).toISOString();

  it("shows the event type its run record kept (the sender's text escaped), and `-` for a record an older svc wrote", () => {
    const summaries = summarizeHistory([
      { kind: "run", id: "older", at: RECENT, route: "github", outcome: "ok" },
      { kind: "run", id: "theirs", at: RECENT, route: "github", outcome: "ok", event: "pull_request" },
      { kind: "delivery", id: "theirs", at: RECENT, route: "github", platform: "log", outcome: "ok" },
      { kind: "run", id: "odd", at: RECENT, route: "github", outcome: "ok", event: "push\u202e" },
    ]);
    const rows = deliveriesTable(summaries, SHARED_NO_REQUEST_NOTE, true).split("\n").slice(1);
    expect(rows[0]).toMatch(/\sodd\s+github\s+push\\u202e\s+-\s+ok\s+-\s+request not in this history \(/);
    expect(rows[1]).toMatch(
      /\stheirs\s+github\s+pull_request\s+-\s+ok\s+log ok\s+request not in this history \(/,
    );
    expect(rows[2]).toMatch(/\solder\s+github\s+-\s+-\s+ok\s+-\s+request not in this history \(/);
    for (const row of rows) expect(row.endsWith(SHARED_NO_REQUEST_NOTE)).toBe(true);
  });

  it("with state.backend: redis, says the request is not here without claiming another instance answered it: on a setup of one, the instance that received it was killed before it recorded it", () => {
    expect(SHARED_NO_REQUEST_NOTE).toBe(
      "request not in this history (received by another instance, or by one killed before it recorded the request)",
    );
    expect(NO_REQUEST_NOTE).toBe("request not in this history");
    expect(SHARED_NO_REQUEST_NOTE.startsWith(NO_REQUEST_NOTE)).toBe(true);
  });

  it("with state.backend: redis, says the request may have been rotated out when it was received before the history kept begins or before the retention", () => {
    const now = Date.now();
    const from = new Date(now - 5 * 60_000).toISOString();
    const ran = (id: string, receivedAgoMs: number) =>
      ({
        kind: "run",
        id,
        at: new Date(now - 1000).toISOString(),
        route: "github",
        outcome: "ok",
        event: "push",
        received_at: now - receivedAgoMs,
      }) as const;
    const summaries = summarizeHistory([
      ran("before-kept", 10 * 60_000),
      ran("after-kept", 2 * 60_000),
      ran("past-retention", 8 * 24 * 3_600_000),
    ]);
    const noteOf = (table: string, id: string) =>
      table.split("\n").find((row) => row.includes(` ${id} `)) ?? "";
    const shared = deliveriesTable(summaries, SHARED_NO_REQUEST_NOTE, true, from);
    expect(noteOf(shared, "before-kept").endsWith(SHARED_ROTATED_NOTE)).toBe(true);
    expect(noteOf(shared, "after-kept").endsWith(SHARED_NO_REQUEST_NOTE)).toBe(true);
    expect(noteOf(shared, "past-retention").endsWith(SHARED_ROTATED_NOTE)).toBe(true);
    // Nothing rotated out: only the one past the retention may have left.
    const unrotated = deliveriesTable(summaries, SHARED_NO_REQUEST_NOTE, true);
    expect(noteOf(unrotated, "before-kept").endsWith(SHARED_NO_REQUEST_NOTE)).toBe(true);
    expect(noteOf(unrotated, "past-retention").endsWith(SHARED_ROTATED_NOTE)).toBe(true);
    // The local backend's row says the bare note either way (a duplicate of the ID tells the two apart).
    const local = deliveriesTable(summaries, NO_REQUEST_NOTE, false, from);
    for (const id of ["before-kept", "after-kept", "past-retention"])
      expect(noteOf(local, id).endsWith(`  ${NO_REQUEST_NOTE}`)).toBe(true);
  });
});
