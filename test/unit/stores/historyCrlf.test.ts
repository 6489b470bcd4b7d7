import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import {
  createHistoryWriter,
  decodePayload,
  encodePayload,
  historyOfIds,
  type RequestRecord,
  readHistory,
} from "../../../src/io/stores/deliveryHistory.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home.cleanup());

const T0 = Date.parse("2026-11-20T10:00:00Z");

/**
 * A history file saved with CRLF line endings (opened in a Windows editor, copied through a tool that
 * converts them) read a JSON payload as the line's text up to its last character, the `}` closing the
 * record: `svc webhook redeliver` sent the body with an extra `}`. A line's trailing `\r` is now dropped.
 */
it("reads a JSON payload from a history file edited to CRLF line endings as it was received", () => {
  home = tempHome();
  const dir = join(home.dir, "deliveries");
  const writer = createHistoryWriter(
    dir,
    (err) => {
      throw err;
    },
    () => T0,
  );
  const bodies = ['{"a":1,"b":"x"}', "plain text"].map((b) => Buffer.from(b));
  for (const [i, body] of bodies.entries()) {
    const { json, ...fields } = encodePayload(body, i === 0);
    const record: RequestRecord = {
      kind: "request",
      id: `crlf-${i}`,
      at: new Date(T0).toISOString(),
      route: "pr",
      status: 202,
      outcome: "accepted",
      content_type: "application/json",
      ...fields,
    };
    writer.record(record, json);
  }
  writer.close();
  const file = join(dir, "history.jsonl");
  writeFileSync(file, readFileSync(file, "utf8").replaceAll("\n", "\r\n"));

  const byId = historyOfIds(dir, (id) => id.startsWith("crlf-"), T0) as RequestRecord[];
  const all = readHistory(dir, T0) as RequestRecord[];
  for (const records of [byId, all]) {
    expect(records.map((r) => r.payload_encoding)).toEqual(["json", "utf8"]);
    records.forEach((record, i) => {
      expect(decodePayload(record)?.toString()).toBe(bodies[i]?.toString());
    });
  }
});
