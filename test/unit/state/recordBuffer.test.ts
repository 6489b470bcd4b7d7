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

  it("started with room for a batch (the group commit's size hint, short or past it), frames the bytes encodeRecord does", () => {
    const texts = Array.from({ length: 64 }, (_, i) => JSON.stringify({ t: "f", k: `pr:d-${i} ✓ 🚀` }));
    // One past the length whose CRC is taken of its text: read in the buffer instead.
    texts.push(JSON.stringify({ t: "a", prompt: "Überprüfe ✓ 🚀 ".repeat(2_000) }));
    const plain = new RecordBuffer();
    for (const text of texts) plain.addText(text);
    for (const hint of [0, 100, plain.bytes(), 4 * plain.bytes()]) {
      const sized = new RecordBuffer(hint);
      for (const text of texts) sized.addText(text);
      expect(sized.bytes()).toBe(plain.bytes());
      expect(sized.data().equals(plain.data())).toBe(true);
    }
    expect(plain.data().equals(Buffer.concat(texts.map((text) => encodeRecord(JSON.parse(text)))))).toBe(
      true,
    );
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
