import { closeSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { writeTextSync } from "../../../src/io/batchedWriter.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome | undefined;
afterEach(() => home?.cleanup());

describe("writeTextSync", () => {
  it("appends the whole text as UTF-8 and returns its size in bytes, not in characters", () => {
    home = tempHome();
    const file = join(home.dir, "out.jsonl");
    const fd = openSync(file, "a", 0o600);
    const first = '{"title":"Überprüfung ✓ 🚀"}\n';
    const second = `${"x".repeat(70_000)}é\n`;
    expect(writeTextSync(fd, first)).toBe(Buffer.byteLength(first));
    expect(writeTextSync(fd, second)).toBe(70_000 + 3);
    closeSync(fd);
    expect(readFileSync(file, "utf8")).toBe(first + second);
  });
});
