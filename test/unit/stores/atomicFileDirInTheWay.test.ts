import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { writeJsonAtomic } from "../../../src/io/stores/atomicFile.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home.cleanup());

describe("a store written where a file stands in place of its directory", () => {
  it("names that file and what to do, for the directory itself and for one further up; the file is left as it was", () => {
    home = tempHome();
    const inTheWay = join(home.dir, "mcp-cache");
    writeFileSync(inTheWay, "kept");
    for (const path of [join(inTheWay, "status.json"), join(inTheWay, "deeper", "status.json")]) {
      expect(() => writeJsonAtomic(path, { pid: 1 })).toThrow(
        `cannot write ${path}: ${inTheWay} is a file, not a directory — the file is unchanged; move that file away (svc makes the directory), then run the command again`,
      );
    }
    expect(readFileSync(inTheWay, "utf8")).toBe("kept");
  });
});
