import { readFileSync, truncateSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  createHistoryWriter,
  encodePayload,
  historyLine,
  historyOfIds,
  type RequestRecord,
  readHistory,
  recentDeliveries,
} from "../../../src/io/stores/deliveryHistory.js";
import { lineId } from "../../../src/io/stores/historyScan.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home.cleanup());

const T0 = Date.parse("2026-11-20T10:00:00Z");
const request = (id: string, extra: Partial<RequestRecord> = {}): RequestRecord => ({
  kind: "request",
  id,
  at: new Date(T0).toISOString(),
  route: "pr",
  status: 202,
  outcome: "accepted",
  ...extra,
});

/**
 * `history.jsonl` cut short in the middle of a line while the gateway runs (truncated by hand or by a
 * tool, a disk image restored under it): the writer appends where the file now ends, so the next record
 * is glued to the cut line. That record was lost: neither `deliveries` nor `redeliver` saw it.
 */
describe("a history file cut mid-line while the gateway writes it", () => {
  // Cut before the line's ID ends, after it (the ID at the glued line's head is then another's), and inside
  // its payload just past a record's head there.
  it.each([
    ["before the cut line's ID ends", () => 20],
    ["after the cut line's ID", () => 60],
    ["in its payload, past a record's head", (text: string) => text.indexOf('"inner"') + 3],
  ])("keeps the record written next, cut %s", (_, cutAt) => {
    home = tempHome();
    const dir = join(home.dir, "deliveries");
    const writer = createHistoryWriter(
      dir,
      (err) => {
        throw err;
      },
      () => T0,
    );
    // The cut line's payload holds a record's head too: only the glued record is taken from the line.
    const held = Buffer.from('{"note":{"kind":"request","id":"inner"}}');
    writer.record(request("first", encodePayload(held, true)), held);
    writer.flush();
    const file = join(dir, "history.jsonl");
    truncateSync(file, cutAt(readFileSync(file, "utf8")));
    const body = Buffer.from('{"number":7,"nested":{"kind":"run","id":"x"}}');
    writer.record(request("next", encodePayload(body, true)), body);
    writer.record(request("later"));
    writer.close();
    expect(readFileSync(file, "utf8")).not.toMatch(/^\{"kind":"request","id":"next"/m);

    expect(readHistory(dir, T0).map((r) => r.id)).toEqual(["next", "later"]);
    const next = historyOfIds(dir, (id) => id === "next", T0);
    expect(next).toEqual([{ ...request("next"), payload_encoding: "json", payload: body.toString() }]);
    expect(historyLine(next[0] as RequestRecord)).toContain(body.toString());
    expect(recentDeliveries(dir, 5, undefined, T0).shown.map((s) => s.id)).toEqual(["later", "next"]);
    expect(recentDeliveries(dir, 1, "pr", T0, { chunkBytes: 16 }).shown.map((s) => s.id)).toEqual(["later"]);
    expect(recentDeliveries(dir, 2, "pr", T0, { chunkBytes: 16 }).shown.map((s) => s.id)).toEqual([
      "later",
      "next",
    ]);
  });

  it("still reads the ID at the head of a line whose payload holds objects of another kind, without parsing it", () => {
    const body = '{"object":{"kind":"Deployment","id":"web"}}';
    const line = Buffer.from(historyLine(request("k8s", { payload_encoding: "json", payload: body })));
    expect(lineId(line, 0, line.length)).toBe("k8s");
  });
});
