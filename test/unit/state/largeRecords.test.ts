import { describe, expect, it } from "vitest";
import { decodeRecords, encodeRecord } from "../../../src/io/state/journal/records.js";

/**
 * An accepted run's record holds its rendered prompt, which may quote the whole payload (`{__raw__}`):
 * with `max_body_bytes` at its largest (256 MiB), and its text JSON-escaped once more in the record, the
 * record is larger than the body. Read back as a bad length, such a 202'd run was lost at the next start.
 */
/** Hundreds of MiB touched: on a VM whose page faults are slow (~10 µs each) and six files beside it, 30 s ran out. */
const HEAVY_MS = 120_000;

describe("a journal record larger than the largest body", () => {
  it(
    "a record past 256 MiB (a prompt quoting a payload full of escapes) is read back whole, not skipped as a bad length",
    () => {
      // 130 Mi quote characters: each is escaped to two bytes in the record, 260 MiB in all.
      const record = { t: "a", prompt: '"'.repeat(130 * 1024 * 1024) };
      const data = encodeRecord(record);
      expect(data.length).toBeGreaterThan(256 * 1024 * 1024);
      const decoded = decodeRecords(data);
      expect(decoded.torn).toBeUndefined();
      expect(decoded.records).toHaveLength(1);
      expect((decoded.records[0] as { prompt: string }).prompt.length).toBe(record.prompt.length);
    },
    HEAVY_MS,
  );

  it("a crash that cut such a record short leaves a torn tail, not damage kept aside", () => {
    const head = encodeRecord({ t: "s", k: "a", at: 1 });
    const body = Buffer.from('{"t":"a","prompt":"\\"\\"\\"');
    const torn = Buffer.alloc(8 + body.length);
    torn.writeUInt32LE(300 * 1024 * 1024, 0);
    body.copy(torn, 8);
    const decoded = decodeRecords(Buffer.concat([head, torn]));
    expect(decoded.records).toEqual([{ t: "s", k: "a", at: 1 }]);
    expect(decoded.torn?.reason).toBe("truncated record");
  });
});
