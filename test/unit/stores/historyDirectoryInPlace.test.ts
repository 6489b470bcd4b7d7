import { mkdirSync, readFileSync, renameSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { historyWarnings } from "../../helpers/historyWarnings.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home?.cleanup());

/** Seen: `[webhook] delivery history not written {"err":"EISDIR: illegal operation on a directory, open …"}`. */
describe("a directory in history.jsonl's place while the gateway runs", () => {
  it("is logged naming it and what to do, once, not as a bare EISDIR", () => {
    home = tempHome();
    const aside = join(home.dir, "aside.jsonl");
    const { warnings, changed: file } = historyWarnings(home.dir, (dir) => {
      const file = join(dir, "history.jsonl");
      renameSync(file, aside);
      mkdirSync(file);
      return file;
    });
    expect(warnings).toEqual([
      [
        `[webhook] delivery history not written: ${file}: it is a directory: move it away (the gateway writes its history file there); said once until a write succeeds again`,
      ],
    ]);
    expect(readFileSync(aside, "utf8")).toContain('"d-1"');
  });
});

/** Seen: `[webhook] delivery history not written {"err":"EEXIST: file already exists, mkdir '…/deliveries'"}`. */
describe("a link to a device in the history directory's place while the gateway runs", () => {
  it("is logged naming the link and what to do, once, not as a bare EEXIST", () => {
    home = tempHome();
    const { warnings, changed: dir } = historyWarnings(home.dir, (dir) => {
      rmSync(dir, { recursive: true });
      symlinkSync("/dev/null", dir);
      return dir;
    });
    expect(warnings).toEqual([
      [
        `[webhook] delivery history not written: ${dir} is a symbolic link to /dev/null, which is a device, not a directory — point the link at a directory, or remove the link (the gateway makes the directory); said once until a write succeeds again`,
      ],
    ]);
  });
});
