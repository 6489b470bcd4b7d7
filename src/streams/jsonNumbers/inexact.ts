/**
 * Numbers a double does not hold: `1234567890123456789` (an id past 2^53) is read by `JSON.parse` as
 * `1234567890123456800` and written back so, `1e400` as Infinity (written `null`). `1.0`, `1e3` or `0.1`
 * print differently but stand for the same value, and pass; so do fractions a double rounds
 * (`0.10000000000000001`).
 */
import { Keeps } from "./kept.js";
import { parseJson } from "./parse.js";
import { isNumberPart, isNumberStart, plainToken, QUOTE, skipString } from "./scan.js";

/** A decimal's value as sign, significant digits (no leading or trailing zeros) and exponent; undefined for zero. */
function decimal(token: string): { sign: string; digits: string; exp: bigint } | undefined {
  const match = /^(-?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(token);
  const [, sign = "", whole = "", fraction = "", exponent = "0"] = match ?? [];
  const all = `${whole}${fraction}`.replace(/^0+/, "");
  const digits = all.replace(/0+$/, "");
  if (digits === "") return undefined;
  return {
    sign,
    digits,
    exp: BigInt(exponent) - BigInt(fraction.length) + BigInt(all.length - digits.length),
  };
}

/**
 * Whether the JSON number token `token` stands for another value once read as a double and written back in a
 * way that matters: out of a double's range (`1e400`, Infinity; `1e-400`, 0), or a whole number written in
 * digits (no exponent: `1234567890123456789`, `1234567890123456789.0`) that is sent as another one
 * (`1234567890123456800`). A fraction, or a number written with an exponent, is rounded to the nearest double
 * as `0.1` is (`0.10000000000000001`, `3.14159265358979323846`, `1.7976931348623159e308` pass).
 */
export function inexactToken(token: string): boolean {
  if (plainToken(token, 0, token.length)) return false;
  const value = Number(token);
  if (!Number.isFinite(value)) return true;
  const written = decimal(token);
  if (written === undefined) return false;
  if (value === 0) return true;
  if (written.exp < 0n || /[eE]/.test(token)) return false;
  const sent = decimal(String(value));
  return sent === undefined || sent.digits !== written.digits || sent.exp !== written.exp;
}

/** The first number token (outside strings) of the JSON text `text` that a double does not hold, or undefined. */
export function inexactNumber(text: string): string | undefined {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      const end = skipString(text, i);
      if (end === -1) return undefined;
      i = end - 1;
    } else if (isNumberStart(code)) {
      let end = i + 1;
      while (end < text.length && isNumberPart(text.charCodeAt(end))) end++;
      const token = text.slice(i, end);
      if (inexactToken(token)) return token;
      i = end - 1;
    }
  }
  return undefined;
}

/**
 * The first number a double does not hold inside `value`, a tree `parseJson` read (where the text of each
 * number that prints differently is kept), as it was written; undefined when none (or for a tree read
 * otherwise). With its own stack: a tree read at any depth.
 */
export function inexactNumberIn(value: unknown): string | undefined {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const item = pending.pop();
    if (item === null || typeof item !== "object") continue;
    const kept = Keeps.get(item);
    // No record on a container: nothing inside it was kept.
    if (kept === undefined) continue;
    for (const text of [...(kept.items ?? []), ...kept.namedTexts().map(([, text]) => text)])
      if (text !== undefined && inexactToken(text)) return text;
    const inside: unknown[] = Array.isArray(item) ? item : Object.values(item);
    for (let i = inside.length - 1; i >= 0; i--) pending.push(inside[i]);
  }
  return undefined;
}

/**
 * `parseJson(text)` at any depth, so `inexactNumberIn` can find such numbers in what it gives: one value
 * nested deeper than `parseJson` reads elsewhere in a body (a tool call's, a `_meta`) costs the other calls
 * none of their checks. Throws like `JSON.parse` on invalid JSON.
 */
export function parseKeepingNumbers(text: string): unknown {
  return parseJson(text, Number.POSITIVE_INFINITY);
}

/**
 * What the model (or a command agent) gets for a call whose arguments hold `number`, which a double does not
 * hold (an integer past 2^53, `1e400`): the tool would get a neighbouring number (another id) or null.
 */
export function inexactArguments(number: string): string {
  const integer = /^-?\d+$/.test(number);
  return `arguments hold ${number}, ${integer ? "an integer past 2^53" : "a number"} that svc cannot pass exactly; the tool was not run — write it as a string ("${number}")`;
}
