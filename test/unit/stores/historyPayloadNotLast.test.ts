import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import {
  createHistoryWriter,
  decodePayload,
  historyOfIds,
  type RequestRecord,
  readHistory,
} from "../../../src/io/stores/deliveryHistory.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home.cleanup());

const T0 = Date.parse("2026-11-20T10:00:00Z");
const AT = new Date(T0).toISOString();

function requestLine(id: string, payload: string, after: string): string {
  const head = `{"kind":"request","id":"${id}","at":"${AT}","route":"pr","status":202,"outcome":"accepted"`;
  return `${head},"content_type":"application/json","payload_encoding":"json","payload":${payload}${after}\n`;
}

/**
 * A JSON payload was read as the line's text from its key to the line's last character but one: a field a
 * newer version writes after it, or a space an editor left at the line's end, was sent as part of the body
 * by `svc webhook redeliver` (`{"n":15},"trace_id":"abc"`, refused as invalid JSON).
 */
it("reads a JSON payload as received when fields or spaces follow it on its line", () => {
  home = tempHome();
  const dir = join(home.dir, "deliveries");
  createHistoryWriter(
    dir,
    (err) => {
      throw err;
    },
    () => T0,
  ).close();
  const cases: [string, string][] = [
    ['{"n":15}', ',"trace_id":"abc"}'],
    ['{"n":15}', "} "],
    ['{"s":"}],\\"x\\":[","a":[{"b":[]}]}', ',"extra":{"payload":[1,"}"]},"z":null}'],
    ['{"t":1}  ', ',"trace_id":"abc"}\t'],
    ['{"plain":true}', "}"],
  ];
  appendFileSync(
    join(dir, "history.jsonl"),
    cases.map(([payload, after], i) => requestLine(`tail-${i}`, payload, after)).join(""),
  );

  const byId = historyOfIds(dir, (id) => id.startsWith("tail-"), T0) as RequestRecord[];
  const all = readHistory(dir, T0) as RequestRecord[];
  for (const records of [byId, all]) {
    expect(records.map((r) => r.id)).toEqual(cases.map((_, i) => `tail-${i}`));
    records.forEach((record, i) => {
      expect(decodePayload(record)?.toString()).toBe(cases[i]?.[0]);
    });
  }
});
