import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { alive, pidInFile, signalGroup } from "../../helpers/process.js";
import { CLI_NODE_ARGS, cliConfig, MAIN, svc } from "./svc.js";

/**
 * `svc cron run` stopped by Ctrl-C (SIGINT) while its agent runs. The agent leads a process group of its
 * own (so a gateway can stop it whole), which a terminal's Ctrl-C does not reach: the command died and the
 * agent ran on, orphaned, to its end (its tools, its model calls), and no last_run said the run was cut.
 */

let home: TempHome | undefined;
const agents: number[] = [];
afterEach(() => {
  for (const pid of agents.splice(0)) signalGroup(pid, "SIGKILL");
  home?.cleanup();
  home = undefined;
});

describe("svc cron run interrupted", { timeout: 60_000 }, () => {
  it("Ctrl-C stops the agent's whole process group, records last_run as an error, and ends as a Ctrl-C does (130)", async () => {
    const h = tempHome();
    home = h;
    const pidFile = join(h.dir, "agent.pid");
    h.write("agent/slow.sh", `#!/usr/bin/env bash\necho $$ > '${pidFile}'\nsleep 60\necho finished\n`, 0o755);
    h.write(
      "config.yaml",
      stringify(
        cliConfig({}, { agent: { provider: "command", command: ["bash", join(h.dir, "agent/slow.sh")] } }),
      ),
    );
    const created = await svc(h, ["cron", "create", "--name", "j", "--schedule", "@daily", "--prompt", "hi"]);
    expect(created.code).toBe(0);

    const child = spawn(process.execPath, [...CLI_NODE_ARGS, MAIN, "cron", "run", "j"], {
      env: { PATH: process.env.PATH ?? "", HOME: h.dir, SVC_HOME: h.dir },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on("close", (code, signal) => resolve({ code, signal })),
    );
    const agent = await pidInFile(pidFile, 20_000);
    agents.push(agent);
    expect(alive(agent)).toBe(true);

    child.kill("SIGINT");
    const end = await ended;
    // Ended by the signal, as a Ctrl-C ends a program (a shell shows 130).
    expect(end.code === 130 || end.signal === "SIGINT").toBe(true);
    expect(stderr).toContain("svc: interrupted (SIGINT): the run of cron job j was cancelled");
    // The agent did not outlive the command.
    await vi.waitFor(() => expect(alive(agent)).toBe(false), { timeout: 10_000 });
    const job = Object.values(
      JSON.parse(readFileSync(join(h.dir, "cron", "jobs.json"), "utf8")).jobs as Record<
        string,
        Record<string, unknown>
      >,
    )[0];
    expect(job?.last_run).toMatchObject({
      status: "error",
      trigger: "manual",
      error: "interrupted (SIGINT): the run of cron job j was cancelled",
    });
  });
});
