import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BodyCollector } from "../../../src/io/http/core.js";

describe("BodyCollector (the body both HTTP servers read, up to max_body_bytes)", () => {
  it("a body sent in one-byte chunked pieces is held in one buffer, not one Buffer per byte", () => {
    const collector = new BodyCollector(1_048_576);
    const text = `{"x":"${"y".repeat(100_000)}"}`;
    let added = 0;
    for (const byte of Buffer.from(text)) if (collector.add(Buffer.from([byte]))) added++;
    expect(added).toBe(text.length);
    expect(collector.pieces).toBe(1);
    expect(collector.body().toString()).toBe(text);
  });

  it("a body in a few chunks is kept as they came: one chunk is the body itself, uncopied", () => {
    const chunk = Buffer.from('{"a":1}');
    const one = new BodyCollector(100);
    one.add(chunk);
    expect(one.body()).toBe(chunk);
  });

  it("a large body with a Content-Length is gathered into one buffer that ends at exactly that size", () => {
    // As uWS gives it: 64 KB chunks whose memory is reused after each call (lent), 3 MiB declared, 16 MiB allowed.
    const declared = 3 * 1024 * 1024;
    const collector = new BodyCollector(16 * 1024 * 1024, declared);
    const lent = Buffer.alloc(64 * 1024);
    const expected = Buffer.alloc(declared);
    for (let at = 0, n = 0; at < declared; at += lent.length, n++) {
      lent.fill(n % 251);
      lent.copy(expected, at);
      expect(collector.add(lent, true)).toBe(true);
      lent.fill(0xff); // reused by the server once the call returns
    }
    // Not grown by doubling past it (a 3 MiB body held 4 MiB).
    expect(collector.capacity).toBe(declared);
    expect(collector.pieces).toBe(1);
    expect(collector.body().equals(expected)).toBe(true);
  });

  it("a declared body holds about what came of it, not what its head declared", () => {
    // A head declaring 1 MiB that sends a byte, then 20 KB more: 16 KiB, then twice what came.
    const collector = new BodyCollector(16 * 1024 * 1024, 1024 * 1024);
    collector.add(Buffer.from("{"), true);
    expect(collector.capacity).toBe(16 * 1024);
    collector.add(Buffer.alloc(20_000, 0x20), true);
    expect(collector.capacity).toBe(2 * 20_001);
    expect(collector.pieces).toBe(1);
  });

  it("a chunk lent for the call is copied when kept as it came, and a body past its declared length still grows", () => {
    const lent = Buffer.from('{"a":1}');
    const one = new BodyCollector(100, 7);
    one.add(lent, true);
    lent.fill(0x20);
    expect(one.body().toString()).toBe('{"a":1}');
    const longer = new BodyCollector(1_000_000, 10);
    const piece = Buffer.alloc(1000, 0x61);
    for (let i = 0; i < 40; i++) longer.add(piece, true);
    expect(longer.body().equals(Buffer.alloc(40_000, 0x61))).toBe(true);
  });

  it("the limit holds exactly: at the limit the body is read, one byte past it add says no", () => {
    const collector = new BodyCollector(100);
    for (let i = 0; i < 100; i++) expect(collector.add(Buffer.from("a"))).toBe(true);
    expect(collector.body().length).toBe(100);
    expect(collector.add(Buffer.from("a"))).toBe(false);
  });

  it("any split of a body gives back the same bytes", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 3000 }),
        fc.array(fc.nat(400), { maxLength: 80 }),
        (bytes, cuts) => {
          const body = Buffer.from(bytes);
          const collector = new BodyCollector(body.length);
          let at = 0;
          for (const cut of cuts) {
            const next = Math.min(body.length, at + cut);
            collector.add(Buffer.from(body.subarray(at, next)));
            at = next;
          }
          collector.add(Buffer.from(body.subarray(at)));
          expect(collector.body().equals(body)).toBe(true);
        },
      ),
    );
  });
});
