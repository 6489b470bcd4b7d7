import { describe, expect, it } from "vitest";
import { decodeText } from "../../../src/agent/tools/web/decodeText.js";
import { charsetOf, titleLine } from "../../../src/agent/tools/webExtract.js";

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

describe("charsetOf: which encoding web_extract reads a page in", () => {
  const html = (text: string) => Buffer.from(text, "latin1");

  it("a byte order mark wins over the Content-Type and <meta>, as in browsers", () => {
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("<p>hi</p>", "utf16le")]);
    expect(charsetOf("text/html", utf16, true)).toBe("utf-16le");
    expect(decodeText(utf16, charsetOf("text/html", utf16, true))).toBe("<p>hi</p>");
    const be = Buffer.from([0xfe, 0xff, 0x00, 0x41]);
    expect(charsetOf("text/plain", be, false)).toBe("utf-16be");
    const utf8 = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("café")]);
    const charset = charsetOf("text/html; charset=iso-8859-1", utf8, true);
    expect(charset).toBe("utf-8");
    expect(decodeText(utf8, charset)).toBe("café");
  });

  it("else the Content-Type's charset, else (HTML) a <meta> declaration, else UTF-8", () => {
    expect(charsetOf("text/html; charset=iso-8859-2", html("<meta charset=utf-8>"), true)).toBe("iso-8859-2");
    expect(charsetOf("text/html", html('<meta charset="windows-1252">'), true)).toBe("windows-1252");
    expect(charsetOf("text/plain", html('<meta charset="windows-1252">'), false)).toBe("utf-8");
    expect(charsetOf("text/html", html("<p>x</p>"), true)).toBe("utf-8");
    // A <meta> that names UTF-16 was itself read as ASCII: the page is not UTF-16 (as in browsers).
    const wrongMeta = Buffer.from('<meta charset="UTF-16"><p>café</p>');
    expect(charsetOf("text/html", wrongMeta, true)).toBe("utf-8");
    expect(decodeText(wrongMeta, charsetOf("text/html", wrongMeta, true))).toContain("café");
  });
});

describe("titleLine: the Title: web_extract shows", () => {
  it("cuts a title past 300 characters (or max_chars) with an ellipsis, and keeps a real one whole", () => {
    expect(titleLine("Notes", 20_000)).toBe("Notes");
    expect(titleLine("T".repeat(300), 20_000)).toBe("T".repeat(300));
    expect(titleLine("T".repeat(2_000_000), 20_000)).toBe(`${"T".repeat(300)}…`);
    expect(titleLine("A long title", 6)).toBe("A long…");
    // A cut through an emoji ends before it.
    expect(titleLine(`${"a".repeat(299)}😀b`, 20_000)).toBe(`${"a".repeat(299)}…`);
  });
});
