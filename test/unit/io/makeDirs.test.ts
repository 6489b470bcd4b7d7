import { mkdtempSync, rmSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createBatchedFileWriter } from "../../../src/io/batchedWriter.js";
import { makeDirs } from "../../../src/io/makeDirs.js";
import { privateDir } from "../../../src/io/privateMode.js";
import { CAN_FAIL_EXT4, failedExt4Dir, unmountFailedExt4 } from "../../helpers/failedExt4.js";

const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
  unmountFailedExt4();
});

function temp(): string {
  const dir = mkdtempSync(join(tmpdir(), "svc-makedirs-"));
  temps.push(dir);
  return dir;
}

const code = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return (err as NodeJS.ErrnoException).code;
  }
  return undefined;
};

describe("makeDirs", () => {
  it("makes every missing directory, private", () => {
    const dir = join(temp(), "a", "b", "c");
    makeDirs(dir);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, "..", "..")).mode & 0o777).toBe(0o700);
  });

  it("keeps ENOENT where it is the cause: a link to nothing in the path", () => {
    const root = temp();
    symlinkSync(join(root, "nowhere"), join(root, "link"));
    expect(code(() => makeDirs(join(root, "link", "logs")))).toBe("ENOENT");
  });
});

describe.runIf(CAN_FAIL_EXT4)("directories on a file system turned read-only", () => {
  it("are refused as EROFS by makeDirs, privateDir and the log writer's open, not as a missing directory", () => {
    const home = failedExt4Dir();
    expect(code(() => makeDirs(join(home, "logs", "deep")))).toBe("EROFS");
    expect(code(() => privateDir(join(home, "sessions", "default")))).toBe("EROFS");
    expect(
      code(() => createBatchedFileWriter(join(home, "logs", "gateway.log"), 0o600, () => undefined)),
    ).toBe("EROFS");
  });
});
