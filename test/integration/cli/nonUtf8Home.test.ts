import { spawn } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { SVC_ARGV } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

/**
 * A HOME or SVC_HOME in Latin-1 (`/home/caf\xe9`, a user made on an older system): Node reads it as
 * `/home/caf\u{FFFD}`, and svc said ok and made that other directory, in UTF-8, beside the one named. It
 * is now refused, naming the variable and what to do, and nothing is made.
 */

let dir: TempHome;
afterEach(() => dir.cleanup());

/** `svc <args>` with one variable set to raw bytes (a Buffer is no environment value for spawn: bash's `$'…'` is). */
function svcWithBytes(variable: string, latin1: string, args: readonly string[]) {
  const command = [process.execPath, ...SVC_ARGV, ...args].map((a) => `'${a}'`).join(" ");
  const child = spawn("bash", ["-c", `${variable}=$'${latin1}' exec ${command}`], {
    env: { PATH: process.env.PATH ?? "", HOME: dir.dir },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  return new Promise<{ code: number | null; output: string }>((resolve) =>
    child.on("exit", (code) => resolve({ code, output })),
  );
}

describe("a data directory path that is not valid UTF-8", { timeout: 30_000 }, () => {
  it("a gateway.pid naming a process whose own SVC_HOME is Latin-1 is stale here, not a refusal of this home", async () => {
    dir = tempHome();
    // A process that looks like a gateway (a `gateway` argument) started with SVC_HOME in Latin-1.
    const other = spawn(
      "bash",
      [
        "-c",
        `export SVC_HOME=$'${dir.dir}/caf\\xe9'; exec '${process.execPath}' -e 'setTimeout(() => {}, 30000)' gateway`,
      ],
      {
        stdio: "ignore",
      },
    );
    try {
      await vi.waitFor(() => expect(readFileSync(`/proc/${other.pid}/cmdline`, "utf8")).toContain("gateway"));
      writeFileSync(join(dir.dir, "gateway.pid"), `${other.pid}\n`);
      const { code, output } = await svcWithBytes("SVC_HOME", dir.dir, ["gateway", "status"]);
      expect(output).toBe("Gateway: not running\n");
      expect(code).toBe(3);
    } finally {
      other.kill("SIGKILL");
    }
  });

  it("SVC_HOME in Latin-1 is refused by svc config check, and no directory is made", async () => {
    dir = tempHome();
    const { code, output } = await svcWithBytes("SVC_HOME", `${dir.dir}/caf\\xe9`, ["config", "check"]);
    expect(code).toBe(1);
    expect(output).toContain(
      `SVC_HOME is not valid UTF-8: it reads as "${dir.dir}/caf\u{FFFD}", with U+FFFD (\u{FFFD}) in place of each byte of another encoding (Latin-1?), so svc would use another directory than the one named — set SVC_HOME to a path written in UTF-8: rename the directory (convmv -f latin1 -t utf8 --notest <dir>) or pick another`,
    );
    expect(readdirSync(dir.dir)).toEqual([]);
  });

  it("HOME in Latin-1 (no SVC_HOME) refuses the gateway's start, naming HOME", async () => {
    dir = tempHome();
    const { code, output } = await svcWithBytes("HOME", `${dir.dir}/h\\xe9`, [
      "gateway",
      "run",
      "--port",
      "0",
    ]);
    expect(code).toBe(1);
    expect(output).toContain(`svc: HOME is not valid UTF-8: it reads as "${dir.dir}/h\u{FFFD}"`);
    expect(output).toContain("— set HOME to a path written in UTF-8, or set SVC_HOME to one:");
    expect(readdirSync(dir.dir)).toEqual([]);
  });
});
