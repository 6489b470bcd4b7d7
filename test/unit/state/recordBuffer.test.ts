import { describe, expect, it } from "vitest";
import { decodeRecords, encodeRecord, RecordBuffer } from "../../../src/io/state/journal/records.js";

describe("RecordBuffer (one flush's journal records in one buffer)", () => {
  it("frames each record exactly as encodeRecord does, in order, past its first 16 KB and with multi-byte text", () => {
    const records = Array.from({ length: 200 }, (_, i) => ({
      t: "a",
      run: { deliveryId: `d-${i}`, prompt: `Überprüfe PR #${i} ✓ 🚀 ${"x".repeat(i * 3)}` },
      at: i,
    }));
    const batch = new RecordBuffer();
    for (const record of records) batch.add(record);
    expect(batch.count).toBe(200);
    const data = batch.data();
    expect(data.length).toBeGreaterThan(16 * 1024);
    expect(data.equals(Buffer.concat(records.map(encodeRecord)))).toBe(true);
    expect(decodeRecords(data)).toEqual({ records, skipped: [] });
  });

  it("writes a record as it was when added, not as the object is at flush", () => {
    const run = { deliveryId: "d-1", prompt: "first" };
    const batch = new RecordBuffer();
    batch.add({ t: "a", run });
    run.prompt = "changed later";
    expect(decodeRecords(batch.data()).records).toEqual([
      { t: "a", run: { deliveryId: "d-1", prompt: "first" } },
    ]);
  });

  it("is empty until a record is added", () => {
    const batch = new RecordBuffer();
    expect(batch.count).toBe(0);
    expect(batch.data().length).toBe(0);
  });
});
