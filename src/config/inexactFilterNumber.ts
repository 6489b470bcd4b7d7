import { keyPath } from "./unquotedTemplate.js";

/** A YAML 1.2 decimal number as written: sign, whole digits, fraction digits, exponent. */
const DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/** Longest integer offered back in the advice (a 64-bit id has 20 digits). */
const MAX_DIGITS = 40;

/**
 * The integer a decimal written with a fraction or exponent names (`1234567890123456789.0`, `1.2e18`), as
 * its digits; undefined when it has a fraction that is not zero, or more digits than an id has.
 */
function integerDigits(written: string): string | undefined {
  const parts = DECIMAL.exec(written);
  if (parts === null) return undefined;
  const [, sign, whole = "", fraction = "", exponent = "0"] = parts;
  const digits = whole + fraction;
  const point = whole.length + Number(exponent);
  if (point < 1 || point > MAX_DIGITS) return undefined;
  if (/[^0]/.test(digits.slice(point))) return undefined;
  const integer = (digits.length >= point ? digits.slice(0, point) : digits.padEnd(point, "0")).replace(
    /^0+(?=\d)/,
    "",
  );
  return `${sign === "-" ? "-" : ""}${integer}`;
}

/**
 * `{field: chat.id, equals: 1234567890123456789.0}`: YAML reads a whole number written as digits past 2^53
 * exactly (it is kept as its digits and compared digit for digit), but one written with a fraction or an
 * exponent is a float, rounded: 1234567890123456800, which equals the payload ids ...789 and ...800 alike.
 * The refusal for such a value of `equals`, `not_equals` or an `in` item on a payload field, or undefined.
 */
export function inexactFilterNumber(
  at: readonly string[],
  written: string,
  value: unknown,
): string | undefined {
  if (typeof value !== "number" || !Number.isFinite(value) || Math.abs(value) <= Number.MAX_SAFE_INTEGER)
    return undefined;
  const digits = integerDigits(written);
  const fix =
    digits === undefined
      ? "write the value in quotes to compare with text, or compare its digits with regex"
      : `write the integer's digits alone, ${digits} (unquoted or in quotes: such an id is compared digit for digit)`;
  return `${keyPath(at)}: YAML reads ${written} as the number ${String(value)}, which past 2^53 stands for its neighbours too (another chat or user id may match) — ${fix}`;
}
