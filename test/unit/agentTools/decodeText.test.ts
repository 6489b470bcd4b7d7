import { describe, expect, it } from "vitest";
import { decodeText } from "../../../src/agent/tools/web/decodeText.js";

describe("decodeText: a page's bytes in the charset it names", () => {
  const bytes = Buffer.from("\x80 \x93quoted\x94 \x96 caf\xe9 \x99 \x81", "latin1");

  it("reads windows-1252 and the labels meaning it (iso-8859-1, latin1, us-ascii) with its 0x80-0x9F table", () => {
    for (const label of ["windows-1252", "ISO-8859-1", "latin1", "us-ascii", "cp1252"]) {
      expect(decodeText(bytes, label)).toBe("€ “quoted” – café ™ \u0081");
    }
  });

  it("decodes other charsets with TextDecoder, and an unknown label as UTF-8", () => {
    expect(decodeText(Buffer.from("zażółć"), "utf-8")).toBe("zażółć");
    expect(decodeText(Buffer.from([0xb1]), "iso-8859-2")).toBe("ą");
    expect(decodeText(Buffer.from("naïve"), "x-no-such-charset")).toBe("naïve");
  });

  it("decodes a large windows-1252 page whole", () => {
    const page = Buffer.alloc(100_000, 0x93);
    expect(decodeText(page, "windows-1252")).toBe("“".repeat(100_000));
  });
});
