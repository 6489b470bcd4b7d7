import { isUtf8 } from "node:buffer";
import { zeroFilledProblem } from "./zeroFilled.js";

/** The number of the first line of `bytes` that is not UTF-8 (no UTF-8 sequence holds a line feed byte). */
export function firstNonUtf8Line(bytes: Buffer): number {
  let line = 1;
  for (let start = 0; ; line += 1) {
    const end = bytes.indexOf(0x0a, start);
    if (end === -1 || !isUtf8(bytes.subarray(start, end))) return line;
    start = end + 1;
  }
}

/**
 * Why a file's `bytes` are not UTF-8 text, saying what to do, or undefined when they are: saved as UTF-16
 * (a byte order mark: what PowerShell 5's `>` writes), or in another encoding, named by its first line that
 * is not UTF-8 (read anyway, a Latin-1 `é` would be U+FFFD, a character no sender sends); zero bytes only (a
 * power cut) are no text either.
 */
export function notUtf8Text(bytes: Buffer): string | undefined {
  const zeros = zeroFilledProblem(bytes);
  if (zeros !== undefined) return `${zeros} — restore it from a backup, or write it again`;
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff))
    return "saved as UTF-16 — save it as UTF-8 (in PowerShell: Set-Content -Encoding utf8, or Out-File -Encoding utf8)";
  if (isUtf8(bytes)) return undefined;
  return `line ${firstNonUtf8Line(bytes)}: not UTF-8 text — save the file as UTF-8 (in another encoding, such as Latin-1 or Windows-1252, a character like é is read as one no sender uses)`;
}
