import { isUtf8 } from "node:buffer";
import { firstNonUtf8Line } from "./textEncoding.js";
import { wholeUtf8Length } from "./utf8Cut.js";

export interface FileText {
  readonly text: string;
  /** Bytes of the file the text stands for (a byte order mark included). */
  readonly shown: number;
  /** "utf-16le" / "utf-16be" when a byte order mark said so; else the text was read as UTF-8. */
  readonly encoding: "utf-8" | "utf-16le" | "utf-16be";
  /** The first line that is not UTF-8 (its bad bytes read as U+FFFD), when one is not. */
  readonly notUtf8Line?: number;
}

function utf16(bytes: Buffer, encoding: "utf-16le" | "utf-16be", cut: boolean): FileText {
  // `stream: true` leaves out a code unit or surrogate pair cut at the end, as a cut at max_bytes makes (a
  // whole file's odd last byte is shown as U+FFFD); the decoder drops the byte order mark.
  const text = new TextDecoder(encoding).decode(bytes, { stream: cut });
  return { text, shown: 2 + text.length * 2, encoding };
}

/**
 * The text of a file's first `bytes` (`cut`: the file goes on past them), or undefined for a binary file
 * (a NUL, which no text holds). A byte order mark picks UTF-16 (what PowerShell 5's `>` and Windows'
 * Notepad write, and which is full of NUL bytes) and is left out of the text; else the text is UTF-8, a
 * cut ending on a whole character, and a file that is not UTF-8 is said to be so rather than its U+FFFD
 * passed off as what it holds.
 */
export function fileText(bytes: Buffer, cut: boolean): FileText | undefined {
  const bom =
    bytes[0] === 0xff && bytes[1] === 0xfe
      ? "utf-16le"
      : bytes[0] === 0xfe && bytes[1] === 0xff
        ? "utf-16be"
        : undefined;
  if (bom !== undefined) {
    const decoded = utf16(bytes, bom, cut);
    return decoded.text.includes("\0") ? undefined : decoded;
  }
  if (bytes.includes(0)) return undefined;
  const whole = bytes.subarray(0, cut ? wholeUtf8Length(bytes) : bytes.length);
  const utf8Bom = whole[0] === 0xef && whole[1] === 0xbb && whole[2] === 0xbf ? 3 : 0;
  const text = whole.subarray(utf8Bom).toString("utf8");
  if (isUtf8(whole)) return { text, shown: whole.length, encoding: "utf-8" };
  return { text, shown: whole.length, encoding: "utf-8", notUtf8Line: firstNonUtf8Line(whole) };
}
