import { mkdirSync, openSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { logFileProblem } from "../../../src/io/logFileProblem.js";
import { makeDirs } from "../../../src/io/makeDirs.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { thrown } from "../../helpers/thrown.js";

let home: TempHome | undefined;
afterEach(() => home?.cleanup());

describe("logFileProblem (what stderr says while the gateway log cannot be written)", () => {
  it("a file where logs/ was (removed while the gateway ran): names it and what to do, not a bare EEXIST", () => {
    home = tempHome();
    home.write("logs", "x\n");
    const logs = join(home.dir, "logs");
    const file = join(logs, "gateway.log");
    for (const err of [thrown(() => makeDirs(logs)), thrown(() => openSync(file, "a"))])
      expect(logFileProblem(file, err)).toBe(
        `${logs} is a file, not a directory — move that file away (the gateway makes the directory again within a second)`,
      );
  });

  it("a directory in gateway.log's place: names it and what to do, not a bare EISDIR", () => {
    home = tempHome();
    const file = join(home.dir, "logs", "gateway.log");
    mkdirSync(file, { recursive: true });
    expect(
      logFileProblem(
        file,
        thrown(() => openSync(file, "a")),
      ),
    ).toBe(
      `${file} is a directory — move that directory away (the gateway writes its log in a file of this name again within a second)`,
    );
  });

  it("any other error is given as the system gave it", () => {
    const full = Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    expect(logFileProblem("/x/logs/gateway.log", full)).toBe("ENOSPC: no space left on device, write");
  });
});

// Seen: "<logs> is a file, not a directory — move that file away (…)" of logs -> /dev/null: a device is no file to move.
describe("logFileProblem of a link to a device in logs/'s place (logs -> /dev/null, to drop the log)", () => {
  it("names the link and the device, and says to point the link at a directory or remove it", () => {
    home = tempHome();
    const logs = join(home.dir, "logs");
    symlinkSync("/dev/null", logs);
    const file = join(logs, "gateway.log");
    for (const err of [thrown(() => makeDirs(logs)), thrown(() => openSync(file, "a"))])
      expect(logFileProblem(file, err)).toBe(
        `${logs} is a symbolic link to /dev/null, which is a device, not a directory — point the link at a directory, or remove the link (the gateway makes the directory again within a second)`,
      );
  });
});
