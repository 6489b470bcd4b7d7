import { constants } from "node:buffer";
import { mkdirSync, rmSync, symlinkSync, truncateSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { refusedGatewayRun } from "./refusedStart.js";
import { cliConfig, svc } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

/**
 * A file where the gateway makes its `state` (journal) or `logs` directory: `svc gateway run` refused to
 * start (the journal "cannot be opened (EEXIST ... mkdir)", or a bare `EEXIST: file already exists, mkdir
 * '.../logs'`) while `svc config check` printed ok and exited 0. Both now say the same line.
 */
describe("svc config check and the gateway's own directories in SVC_HOME", () => {
  for (const [name, holds] of [
    ["state", "its journal of accepted runs"],
    ["logs", "its log (gateway.log)"],
  ] as const) {
    it(`a file in ${name}'s place: check exits 1 with the line the gateway refuses to start with`, async () => {
      home = tempHome();
      home.write(name, "not a directory\n");
      const problem = `${join(home.dir, name)}: not a directory — the gateway keeps ${holds} there: move that file away (the gateway makes the directory)`;
      const check = await svc(home, ["config", "check"]);
      expect(check.code).toBe(1);
      expect(check.stdout).toContain("1 problem: the gateway would not start");
      expect(check.stderr).toContain(problem);
      const run = await refusedGatewayRun(home, ["--port", "0"]);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(problem);
    });
  }

  // Seen: "<h>/logs: not a directory — … move that file away" of logs -> /dev/null, which is no file to move,
  // while the running gateway names the link (logFileProblem); and so of a link to a file.
  for (const [name, holds] of [
    ["state", "its journal of accepted runs"],
    ["logs", "its log (gateway.log)"],
  ] as const) {
    it(`a symbolic link to a device or to a file in ${name}'s place: check and the start name the link to change`, async () => {
      home = tempHome();
      const dir = join(home.dir, name);
      const file = home.write("notes.txt", "a file\n");
      for (const [target, what] of [
        ["/dev/null", "a device"],
        [file, "a file"],
      ] as const) {
        rmSync(dir, { force: true });
        symlinkSync(target, dir);
        const problem = `${dir} is a symbolic link to ${target}, which is ${what}, not a directory — the gateway keeps ${holds} there: point the link at a directory, or remove the link (the gateway makes the directory)`;
        const check = await svc(home, ["config", "check"]);
        expect(check.code).toBe(1);
        expect(check.stderr).toContain(problem);
        const run = await refusedGatewayRun(home, ["--port", "0"]);
        expect(run.code).toBe(1);
        expect(run.stderr).toContain(problem);
      }
    });
  }

  for (const [name, holds] of [
    ["gateway.pid", "its pid"],
    ["gateway.json", "where it listens"],
    ["logs/gateway.log", "its log"],
  ] as const) {
    it(`a directory in ${name}'s place: check exits 1 with the line the gateway refuses to start with`, async () => {
      home = tempHome();
      mkdirSync(join(home.dir, name), { recursive: true });
      const problem = `${join(home.dir, name)}: a directory — the gateway writes ${holds} in a file of this name: move that directory away`;
      const check = await svc(home, ["config", "check"]);
      expect(check.code).toBe(1);
      expect(check.stderr).toContain(problem);
      // Before it listens: not a misleading "SVC_HOME cannot be written" once it took requests.
      const run = await refusedGatewayRun(home, ["--port", "0"]);
      expect(run.code).toBe(1);
      expect(run.stderr).toBe(`svc: ${problem}\n`);
    });
  }

  // A link that leads back to itself made both stop at a bare `ELOOP: too many symbolic links encountered, stat …`.
  it("a symbolic link to itself in logs/gateway.log's place: check exits 1 with the line the gateway refuses to start with", async () => {
    home = tempHome();
    mkdirSync(join(home.dir, "logs"));
    symlinkSync("gateway.log", join(home.dir, "logs", "gateway.log"));
    const problem = `${join(home.dir, "logs", "gateway.log")}: a symbolic link into a loop of links, or a chain of more than 40 (ELOOP) — the gateway writes its log in a file of this name: remove the link`;
    const check = await svc(home, ["config", "check"]);
    expect(check.code).toBe(1);
    expect(check.stderr).toContain(problem);
    const run = await refusedGatewayRun(home, ["--port", "0"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`svc: ${problem}\n`);
  });

  it("svc gateway setup prints it instead of how to start the gateway", async () => {
    home = tempHome();
    home.write("state", "not a directory\n");
    const setup = await svc(home, ["gateway", "setup", "--non-interactive"]);
    expect(setup.code).toBe(0);
    expect(setup.stdout).toContain(
      `Note: the gateway will not start until this is fixed:\n${join(home.dir, "state")}: not a directory — the gateway keeps its journal of accepted runs there`,
    );
    expect(setup.stdout).not.toContain("Start the gateway with");
  });

  it("a cron directory in a loop of links is named by the check of its store, not a bare ELOOP", async () => {
    home = tempHome();
    home.write("config.yaml", "");
    // `ln -s loopdir loopdir; ln -s loopdir/cron cron`. Seen: "svc: ELOOP: too many symbolic links encountered,
    // stat '<home>/cron'" (exit 1), nothing else checked; then "<home>/cron/jobs.json: cannot be read (ELOOP …)".
    symlinkSync("loopdir", join(home.dir, "loopdir"));
    symlinkSync("loopdir/cron", join(home.dir, "cron"));
    const check = await svc(home, ["config", "check"]);
    expect(check.stderr).not.toContain("ELOOP");
    expect(check.stderr).toContain(
      `Warning: ${join(home.dir, "cron")}: a symbolic link into a loop of links, or a chain of more than 40 — the default profile's cron jobs cannot be kept there: point the link at a directory, or remove the link (svc makes the directory); the gateway skips this profile's cron jobs until then`,
    );
    expect(check.code).toBe(0);
  });

  // Seen: check exit 0 and the gateway started, then each run logged "WARN run session not recorded … ELOOP".
  it("a sessions directory in a loop of links: check exits 1 with the line the gateway refuses to start with", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig()));
    symlinkSync("loopdir", join(home.dir, "loopdir"));
    symlinkSync("loopdir/sessions", join(home.dir, "sessions"));
    symlinkSync("loopdir/mcp-tokens", join(home.dir, "mcp-tokens"));
    const sessions = `${join(home.dir, "sessions")}: a symbolic link into a loop of links, or a chain of more than 40 — the gateway keeps its run sessions there: point the link at a directory, or remove the link`;
    const tokens = `${join(home.dir, "mcp-tokens")}: a symbolic link into a loop of links, or a chain of more than 40 — the gateway keeps its MCP logins there: point the link at a directory, or remove the link`;
    const check = await svc(home, ["config", "check"]);
    expect(check.code).toBe(1);
    expect(check.stdout).toContain("2 problems: the gateway would not start");
    expect(check.stderr).toContain(`${sessions}\n${tokens}\n`);
    const run = await refusedGatewayRun(home, ["--port", "0"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`svc: ${sessions}\n${tokens}\n`);
  });

  it("a symbolic link to nothing in state's place names its target", async () => {
    home = tempHome();
    symlinkSync(join(home.dir, "moved-away"), join(home.dir, "state"));
    const check = await svc(home, ["config", "check"]);
    expect(check.code).toBe(1);
    expect(check.stderr).toContain(
      `${join(home.dir, "state")}: a symbolic link to ${join(home.dir, "moved-away")}, which does not exist`,
    );
  });

  it("a journal segment the gateway cannot read: check exits 1 with the gateway's own refusal", async () => {
    home = tempHome();
    // A file no buffer takes whole (sparse: no disk used); as root, no file is one this user cannot read.
    const segment = home.write("state/journal-000001.seg", "");
    truncateSync(segment, constants.MAX_LENGTH + 1);
    const check = await svc(home, ["config", "check"]);
    expect(check.code).toBe(1);
    const problem = `${join(home.dir, "state")}: the state journal cannot be opened (${segment} cannot be read (it holds ${constants.MAX_LENGTH + 1} bytes, more than one buffer takes`;
    expect(check.stderr).toContain(problem);
    // Refused by the gateway's start, after `gateway run` installed its signal handlers: a process of its own.
    const run = await svc(home, ["gateway", "run", "--port", "0"], { timeoutMs: 20_000 });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(problem);
  });

  it("the journal of a running gateway (its lock held) is fine", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig()));
    expect((await svc(home, ["gateway", "start", "--timeout", "60"])).code).toBe(0);
    try {
      const check = await svc(home, ["config", "check"]);
      expect(check.stderr).toBe("");
      expect(check.code).toBe(0);
    } finally {
      await svc(home, ["gateway", "stop"]);
    }
  });

  // A directory at a segment's name refused the start (EISDIR); the start sets it aside now (durability.md).
  it("a directory at a journal segment's name is no problem: the start sets it aside", async () => {
    home = tempHome();
    mkdirSync(join(home.dir, "state", "journal-000001.seg"), { recursive: true });
    const check = await svc(home, ["config", "check"]);
    expect(check.stderr).toBe("");
    expect(check.code).toBe(0);
  });

  it("existing directories are fine", async () => {
    home = tempHome();
    home.write("state/keep", "");
    home.write("logs/gateway.log", "");
    const check = await svc(home, ["config", "check"]);
    expect(check.code).toBe(0);
    expect(check.stdout).toMatch(/^ok: /);
  });
});
