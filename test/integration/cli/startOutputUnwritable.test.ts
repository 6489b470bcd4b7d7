import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, svcProcess } from "./svc.js";

/**
 * `svc gateway start` keeps the started gateway's output in logs/gateway.out. Where it cannot open that file
 * though SVC_HOME passed its writable check (ext4 turned read-only by an error still answers `access` as
 * writable, then refuses the open with EROFS), it said only `svc: EROFS: read-only file system, open '…'`.
 */

const homes: TempHome[] = [];
afterEach(() => {
  for (const home of homes.splice(0)) home.cleanup();
});

describe("svc gateway start, its output file cannot be opened", () => {
  it("names the file, why, and what to do (exit 1)", async () => {
    const home = tempHome();
    homes.push(home);
    home.write("config.yaml", stringify(cliConfig({ a: { secret: "s" } })), 0o600);
    const out = join(home.dir, "logs", "gateway.out");
    // A directory in its place: refused at the open, as a read-only file system refuses it.
    mkdirSync(out, { recursive: true });
    const started = await svcProcess(home, ["gateway", "start", "--port", "0"]);
    expect(started.stderr).toBe(
      `svc: ${out}: cannot be written (EISDIR: illegal operation on a directory, open '${out}') — svc gateway start keeps the gateway's output there: ${out} is a directory: move that directory away (svc makes the file), or set SVC_HOME to a directory this user can write\n`,
    );
    expect(started.code).toBe(1);
  });

  it("a symbolic link to nothing in its place: names the link and where it points", async () => {
    const home = tempHome();
    homes.push(home);
    home.write("config.yaml", stringify(cliConfig({ a: { secret: "s" } })), 0o600);
    const out = join(home.dir, "logs", "gateway.out");
    const gone = join(home.dir, "gone", "gateway.out");
    mkdirSync(join(home.dir, "logs"), { recursive: true });
    symlinkSync(gone, out);
    const started = await svcProcess(home, ["gateway", "start", "--port", "0"]);
    expect(started.stderr).toContain(
      `svc gateway start keeps the gateway's output there: ${out} is a symbolic link to ${gone}, which cannot be made: remove the link, or create the directory it points into`,
    );
    expect(started.code).toBe(1);
  });
});
