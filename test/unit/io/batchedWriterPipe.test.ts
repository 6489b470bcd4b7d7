import { execFileSync } from "node:child_process";
import { chmodSync, closeSync, constants, mkdirSync, openSync, statSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createBatchedFileWriter } from "../../../src/io/batchedWriter.js";
import { privateDir } from "../../../src/io/privateMode.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home.cleanup());

/**
 * A named pipe in gateway.log's place (made for a log shipper): with no program reading it, opening it for
 * writing waited for one, for ever — `svc gateway run` hung before it listened, deaf to SIGTERM (its handler
 * never ran); with a reader that stopped reading, the first write past the pipe's 64 KiB held the gateway.
 */
describe("a batched file writer whose file is a named pipe", () => {
  const pipe = (mode = "600") => {
    home = tempHome();
    const file = join(home.dir, "logs", "gateway.log");
    home.write("logs/.keep", "");
    execFileSync("mkfifo", ["-m", mode, file]);
    return file;
  };

  it("no program reads it: refused at once, saying what to do, not waited on", () => {
    const file = pipe();
    expect(() => createBatchedFileWriter(file, 0o600, () => {})).toThrow(
      `${file} is a named pipe that no program reads (ENXIO) — start the program that reads it first, or move the pipe away (svc then writes a file there)`,
    );
  });

  it("its reader stopped reading: a write past the pipe's buffer fails and is reported, never blocks", () => {
    const file = pipe();
    const reader = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const errors: unknown[] = [];
      const writer = createBatchedFileWriter(file, 0o600, (err) => errors.push(err));
      const line = `${"x".repeat(1023)}\n`;
      for (let i = 0; i < 200; i++) {
        writer.write(line);
        writer.flush();
      }
      writer.close();
      expect(errors.length).toBeGreaterThan(0);
      expect(String(errors[0])).toContain("EAGAIN");
    } finally {
      closeSync(reader);
    }
  });

  // svc running as root narrowed whatever it opened in gateway.log's place: with gateway.log linked to
  // /dev/null (to throw the log away), /dev/null became 0600 and every other user's programs lost it. A
  // device, pipe or socket keeps its mode; the regular files svc keeps are narrowed as before.
  it("keeps its mode: only a regular file in the log's place is narrowed", () => {
    const file = pipe("644");
    const reader = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      createBatchedFileWriter(file, 0o600, () => {}).close();
      expect(statSync(file).mode & 0o777).toBe(0o644);
    } finally {
      closeSync(reader);
    }
  });
});

// A data directory linked elsewhere (`logs` to /var/log) points where its owner chose: svc running as root
// narrowed the link's target to 0700, closing it to every other user's programs.
it("a symbolic link in a private directory's place keeps its target's mode", () => {
  home = tempHome();
  const target = join(home.dir, "shared-logs");
  mkdirSync(target);
  chmodSync(target, 0o755);
  const link = join(home.dir, "logs");
  symlinkSync(target, link);
  privateDir(link);
  expect(statSync(target).mode & 0o777).toBe(0o755);
  const own = join(home.dir, "state");
  mkdirSync(own, { mode: 0o755 });
  chmodSync(own, 0o755);
  privateDir(own);
  expect(statSync(own).mode & 0o777).toBe(0o700);
});
