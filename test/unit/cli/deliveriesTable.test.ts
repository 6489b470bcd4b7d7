import { describe, expect, it } from "vitest";
import { deliveriesTable } from "../../../src/cli/webhook/deliveries.js";
import type { DeliverySummary, RequestRecord } from "../../../src/io/stores/deliveryHistory.js";

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
