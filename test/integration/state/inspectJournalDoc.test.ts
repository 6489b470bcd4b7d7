import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";

const ROOT = join(import.meta.dirname, "../../..");
const SEGMENT = join(ROOT, "test/fixtures/upgrade-ce8d18f9/state/journal-000001.seg");

/** The script docs/durability.md gives under "Inspecting the journal" (the text inside `node -e '…'`). */
function inspectScript(): string {
  const doc = readFileSync(join(ROOT, "docs/durability.md"), "utf8");
  const section = doc.slice(doc.indexOf("### Inspecting the journal"));
  const script = /```sh\nnode -e '\n([\s\S]*?)\n}' "\$\{SVC_HOME/.exec(section)?.[1];
  if (script === undefined) throw new Error("no inspection script under Inspecting the journal");
  return `${script}\n}`;
}

/** The byte offsets of the records of a segment, in order. */
function recordOffsets(segment: Buffer): number[] {
  const offsets: number[] = [];
  for (let at = 0; at + 8 <= segment.length; ) {
    const length = segment.readUInt32LE(at);
    if (length === 0) break;
    offsets.push(at);
    at += 8 + length;
  }
  return offsets;
}

let home: TempHome | undefined;
afterEach(() => {
  home?.cleanup();
  home = undefined;
});

/** The inspection's output for `segment`, written as a file of a home of the test. */
function inspect(segment: Buffer): string[] {
  home = tempHome();
  const file = join(home.dir, "journal-000001.seg");
  writeFileSync(file, segment);
  return execFileSync(process.execPath, ["-e", inspectScript(), file], { encoding: "utf8" })
    .trimEnd()
    .split("\n")
    .slice(1);
}

describe("the journal inspection script of docs/durability.md", () => {
  const whole = readFileSync(SEGMENT);
  const offsets = recordOffsets(whole);
  const third = offsets[2] as number;
  const fourth = offsets[3] as number;

  it("lists every record of a whole segment", () => {
    const lines = inspect(whole);
    expect(lines).toHaveLength(offsets.length);
    expect(lines.map((line) => (JSON.parse(line) as { t: string }).t).slice(0, 3)).toEqual([
      "snap",
      "snap-end",
      "a",
    ]);
  });

  it("names a record with a bad length, shows what it skipped, and goes on with the records after it", () => {
    const damaged = Buffer.from(whole);
    damaged.writeUInt32LE(0x7fffffff, third);
    const lines = inspect(damaged);
    expect(lines[2]).toMatch(
      new RegExp(
        `^-- damaged at byte ${third}: ${fourth - third} bytes skipped: .*"deliveryId\\\\":\\\\"p1\\\\"`,
      ),
    );
    expect(lines.slice(3)).toEqual(inspect(whole).slice(3));
  });

  it("names a hole of zeros in the middle, and goes on after it", () => {
    const holed = Buffer.from(whole);
    holed.fill(0, third, fourth);
    const lines = inspect(holed);
    expect(lines[2]).toBe(`-- damaged at byte ${third}: ${fourth - third} zero bytes skipped`);
    expect(lines.slice(3)).toEqual(inspect(whole).slice(3));
  });

  it("names a torn last record, and stops at the zeros a segment was grown into", () => {
    const last = offsets.at(-1) as number;
    const torn = Buffer.concat([whole.subarray(0, last + 12), Buffer.alloc(4096)]);
    const lines = inspect(torn);
    expect(lines).toHaveLength(offsets.length);
    expect(lines.at(-1)).toMatch(new RegExp(`^-- damaged at byte ${last}: 12 bytes skipped: `));
  });
});
