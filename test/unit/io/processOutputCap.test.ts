import { describe, expect, it } from "vitest";
import { runProcess } from "../../../src/io/process.js";

/** `node -e script`, its standard output capped at `maxBuffer` bytes; a timeout no test waits for. */
function run(script: string, maxBuffer: number) {
  return runProcess({
    file: process.execPath,
    args: ["-e", script],
    input: "",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    timeoutMs: 600_000,
    maxBuffer,
  });
}

describe("runProcess: the cap on standard output", () => {
  it("is counted in bytes: five `é` (10 bytes) fit 10, six (12 bytes, 6 characters) do not", async () => {
    expect(await run('process.stdout.write("é".repeat(5))', 10)).toEqual({
      ok: true,
      stdout: "ééééé",
      stderr: "",
    });
    expect(await run('process.stdout.write("é".repeat(6))', 10)).toMatchObject({
      ok: false,
      why: "standard output over 10 bytes",
      stdoutOver: "10 bytes",
    });
  });

  // Before, it went on until it ended by itself (a minute here), or at its timeout.
  it("stops the process there, not at its timeout, also one that ignores the closed pipe", async () => {
    const script =
      'process.stdout.on("error", () => {}); process.stdout.write("x".repeat(100000)); setTimeout(() => {}, 60_000);';
    expect(await run(script, 1024)).toMatchObject({ ok: false, stdoutOver: "1024 bytes" });
  });
});
