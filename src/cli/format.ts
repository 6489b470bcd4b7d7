import { namedProfile } from "../config/paths.js";
import { SvcError } from "../errors.js";

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it replaces
const CONTROL_RUNS = /[\x00-\x1f\x7f]+/g;

/**
 * Left-aligned columns separated by two spaces; the first row is the header. A line break or other
 * control character in a cell (a description written with one) is shown as a space: one row per line.
 */
export function formatTable(input: readonly (readonly string[])[]): string {
  const rows = input.map((row) => row.map((cell) => cell.replace(CONTROL_RUNS, " ")));
  const widths: number[] = [];
  for (const row of rows) {
    for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, cell.length);
  }
  return rows
    .map((row) =>
      row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join("  "),
    )
    .join("\n");
}

/**
 * A commander parser collecting a repeated `<option> key=value` option into one record; a usage error
 * names that option. `__proto__` is refused: the record could not hold it, so it would vanish without a word.
 */
export function pairsOption(
  option: string,
  shape: string,
  what: string,
): (value: string, previous?: Record<string, string>) => Record<string, string> {
  return (value, previous = {}) => {
    const eq = value.indexOf("=");
    if (eq <= 0) throw new SvcError("usage", `${option}: expected ${shape}, got "${value}"`);
    if (value.slice(0, eq) === "__proto__")
      throw new SvcError("usage", `${option}: "__proto__" cannot be ${what}`);
    return { ...previous, [value.slice(0, eq)]: value.slice(eq + 1) };
  };
}

/** Collects repeated `--deliver-extra key=value` options. */
export const collectPairs = pairsOption("--deliver-extra", "key=value", "a deliver_extra key");

/** ` --profile <name>` for a named profile, so printed commands work as shown. */
export function profileFlag(profile: string | undefined): string {
  const named = namedProfile(profile);
  return named === undefined ? "" : ` --profile ${named}`;
}
