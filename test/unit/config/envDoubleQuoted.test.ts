import { execFileSync } from "node:child_process";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { readEnvFile } from "../../../src/config/envFile.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

const homes: TempHome[] = [];
afterEach(() => {
  for (const home of homes.splice(0)) home.cleanup();
});

/** The value bash gives each name after sourcing `file`, in the order of `names`. */
function bashReads(file: string, names: readonly string[]): string[] {
  const script = `set -a; . "$1"; shift; for n in "$@"; do printf '%s\\0' "\${!n}"; done`;
  const out = execFileSync("bash", ["-c", script, "bash", file, ...names], { encoding: "utf8" });
  return out.split("\0").slice(0, names.length);
}

/** `text` written in double quotes as for a shell: `\` and `"` escaped with a backslash. */
const doubleQuoted = (text: string) => `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;

describe('.env "double-quoted" values: \\" and \\\\ as a shell reads them', () => {
  it("a value escaped for a shell reads back as its text, as bash reads it", () => {
    const home = tempHome();
    homes.push(home);
    // Printable ASCII without `$` and backquote (the shell would expand them), with the two escaped characters often.
    const char = fc.oneof(
      fc.constantFrom("\\", '"', "n", "r", "#", " "),
      fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)),
    );
    const text = fc.array(char, { maxLength: 24 }).map((chars) => chars.join("").replace(/[$`]/g, "_"));
    fc.assert(
      fc.property(fc.array(text, { minLength: 1, maxLength: 4 }), (values) => {
        const names = values.map((_, i) => `V${i}`);
        const file = home.write(
          "probe.env",
          `${values.map((value, i) => `${names[i]}=${doubleQuoted(value)}`).join("\n")}\n`,
        );
        const svc = readEnvFile(file);
        expect(names.map((name) => svc[name])).toEqual(values);
        expect(bashReads(file, names)).toEqual(values);
      }),
      { numRuns: 60 },
    );
  });

  it("keeps dotenv's \\n (a line feed) and reads \\\\n as a backslash and an n", () => {
    const home = tempHome();
    homes.push(home);
    const file = home.write(".env", 'A="l1\\nl2"\nB="x\\\\ny"\nC="tail\\\\"\nD="q\\"uote" # comment\n');
    expect(readEnvFile(file)).toEqual({ A: "l1\nl2", B: "x\\ny", C: "tail\\", D: 'q"uote' });
  });
});
