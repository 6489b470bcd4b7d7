import { execFileSync } from "node:child_process";
import { closeSync, constants, openSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createBatchedFileWriter } from "../../../src/io/batchedWriter.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home.cleanup());

/**
 * A named pipe in gateway.log's place (made for a log shipper): with no program reading it, opening it for
 * writing waited for one, for ever — `svc gateway run` hung before it listened, deaf to SIGTERM (its handler
 * never ran); with a reader that stopped reading, the first write past the pipe's 64 KiB held the gateway.
 */
describe("a batched file writer whose file is a named pipe", () => {
  const pipe = () => {
    home = tempHome();
    const file = join(home.dir, "logs", "gateway.log");
    home.write("logs/.keep", "");
    execFileSync("mkfifo", ["-m", "600", file]);
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
});
