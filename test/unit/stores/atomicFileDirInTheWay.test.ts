import { readFileSync, symlinkSync, writeFileSync } from "node:fs";
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

  // Seen: "<dir> is a file, not a directory — … move that file away" of mcp-cache -> /dev/null: the device is the
  // system's, the link is what to change.
  it("names a link to a device in the directory's place as one, with the link to change", () => {
    home = tempHome();
    const inTheWay = join(home.dir, "mcp-cache");
    symlinkSync("/dev/null", inTheWay);
    const path = join(inTheWay, "status.json");
    expect(() => writeJsonAtomic(path, { pid: 1 })).toThrow(
      `cannot write ${path}: ${inTheWay} is a symbolic link to /dev/null, which is a device, not a directory — the file is unchanged; point the link at a directory, or remove the link (svc makes the directory), then run the command again`,
    );
  });
});
