import type { ChildProcess } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { startCliGateway } from "../../helpers/cliGateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { journalLines } from "../../helpers/runJournal.js";
import { cliConfig, svc, waitFor } from "./svc.js";

/**
 * `agent.command` whose program a `${VAR}` of the environment gave (the variable named like no credential):
 * `svc config check` named it as config.yaml writes it when it was not there, but a script whose `#!` line
 * names a missing interpreter was quoted by its path there, and a failed run quoted the value (`spawn
 * /opt/<value>/agent ENOENT`, `<its path> exists, but …`) in its message: the gateway's log and the run
 * journal.
 */

let home: TempHome;
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  home.cleanup();
});

const shown = (text: string) => `"${text}" (the value it gives is not shown)`;
/** A text as the log's JSON fields write it. */
const asLogged = (text: string) => JSON.stringify(text).slice(1, -1);

/** A gateway of `home` whose agent runs `${AGENTBIN}` set to `bin`; the error of the run it was sent. */
async function failedRun(bin: string): Promise<{ error: string; log: string; check: string }> {
  const env = { AGENTBIN: bin };
  home.write(
    "config.yaml",
    stringify({
      ...cliConfig({ r: { secret: "INSECURE_NO_AUTH" } }),
      agent: { provider: "command", command: [`$\{AGENTBIN}`, "--x"] },
    }),
  );
  const gateway = await startCliGateway(home, children, env);
  const accepted = await postJson(`http://127.0.0.1:${gateway.port}/webhooks/r`, { n: 1 });
  expect(accepted.status).toBe(202);
  const errors = () => journalLines<{ error?: string }>(home.dir).flatMap((l) => l.error ?? []);
  await waitFor(() => errors().length > 0 && gateway.output().includes("agent command"), "the failed run");
  const check = await svc(home, ["config", "check"], { env });
  return { error: errors()[0] as string, log: gateway.output(), check: check.stdout + check.stderr };
}

describe(`svc gateway run: agent.command a $\{VAR} of the environment gave`, { timeout: 60_000 }, () => {
  it("a program that is not there: the failed run names it as config.yaml writes it", async () => {
    home = tempHome();
    const { error, log, check } = await failedRun("/opt/SECRETV-DIR/agent");
    expect(error).toBe(`agent command could not be started (spawn ${shown(`$\{AGENTBIN}`)} ENOENT)`);
    expect(log).toContain(asLogged(error));
    expect(check).toContain(`agent.command: ${shown(`$\{AGENTBIN}`)} does not exist`);
    expect([error, log, check].join("\n")).not.toContain("SECRETV");
  });

  it("a script whose interpreter is missing: the run and svc config check call it the file", async () => {
    home = tempHome();
    const bin = home.write("SECRETV-DIR/agent", "#!/nonexistent/interpreter\n", 0o755);
    const { error, log, check } = await failedRun(bin);
    const problem = `${shown(`$\{AGENTBIN}`)}: the file exists, but the interpreter its #! line names, /nonexistent/interpreter, is not on this machine`;
    expect(error).toMatch(/^agent command could not be started \(/);
    expect(error).toContain(problem);
    expect(log).toContain(asLogged(error));
    expect(check).toContain(`agent.command: every agent run fails to start: ${problem}`);
    expect([error, log, check].join("\n")).not.toContain("SECRETV");
  });

  it("a script saved with Windows line endings: no fix names its path", async () => {
    home = tempHome();
    const bin = home.write("SECRETV-DIR/agent", "#!/bin/sh\r\ncat\r\n", 0o755);
    const { error, log, check } = await failedRun(bin);
    expect(error).toContain(
      `${shown(`$\{AGENTBIN}`)}: the file exists, but its first line ends with a carriage return`,
    );
    expect(error).toContain("(dos2unix <the file>)");
    expect(check).toContain("(dos2unix <the file>)");
    expect([error, log, check].join("\n")).not.toContain("SECRETV");
  });
});
