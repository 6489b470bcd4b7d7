import { describe, expect, it } from "vitest";
import { GROWTH_BYTES } from "../../../src/io/state/journal/groupCommit.js";
import { decodeRecords, encodeRecords } from "../../../src/io/state/journal/records.js";

/**
 * A segment's records are followed by the zeros it was grown into ahead of them; a byte that is not zero
 * among them (garbage a crash left) makes the tail torn through that byte, wherever it stands: in the
 * first bytes after the records, on either side of a 4 KiB boundary counted from the end, or last.
 */
describe("the zeros after a segment's records", () => {
  const records = [
    { t: "s", k: "a", at: 1 },
    { t: "s", k: "b", at: 2, pad: "x".repeat(300) },
  ];
  const written = encodeRecords(records);
  const end = written.length;
  // An odd size, so the blocks counted from the end do not line up with the records' end.
  const segment = () => Buffer.concat([written, Buffer.alloc(GROWTH_BYTES + 1234)]);

  it("all zeros: every record, the rest unused", () => {
    const data = segment();
    expect(decodeRecords(data)).toEqual({ records, skipped: [], unused: data.length - end });
  });

  it("one stray byte anywhere in them: the tail is torn through it", () => {
    const length = segment().length;
    const places = [
      end + 8,
      end + 9,
      end + 4095,
      end + 4096,
      end + 5000,
      length - 4097,
      length - 4096,
      length - 4095,
      length - 8193,
      length - 8192,
      length - 2,
      length - 1,
    ];
    for (const at of places) {
      const data = segment();
      data[at] = 0x01;
      expect(decodeRecords(data), `byte ${at}`).toEqual({
        records,
        skipped: [],
        torn: { offset: end, skippedBytes: at + 1 - end, reason: "truncated record" },
      });
    }
  });

  it("two stray bytes: torn through the later one", () => {
    const data = segment();
    data[end + 100] = 0x01;
    data[data.length - 5000] = 0x02;
    expect(decodeRecords(data).torn).toEqual({
      offset: end,
      skippedBytes: data.length - 5000 + 1 - end,
      reason: "truncated record",
    });
  });
});
