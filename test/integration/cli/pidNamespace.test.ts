import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { SVC_ARGV } from "../../helpers/cliEntry.js";
import { startCliGateway } from "../../helpers/cliGateway.js";
import { UNSHARE } from "../../helpers/container.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { OneCliProcess } from "../../helpers/oneCliProcess.js";
import { cliConfig } from "./svc.js";

/**
 * `svc gateway status` run in a container on the host's SVC_HOME (or on the host for a container's
 * gateway) sees no process of gateway.pid's pid — another PID namespace — and removed the live gateway's
 * gateway.pid as stale, after which `svc gateway stop` no longer found it. gateway.json now records the
 * gateway's PID namespace, and a command in another one keeps gateway.pid; status, stop and start there ask
 * the /health of the address gateway.json records, and say what they found.
 */

const children: ChildProcess[] = [];
let home: TempHome;
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  home.cleanup();
});

/** A new PID namespace (with its own /proc); its process ends when unshare is killed. */
const UNSHARED = ["unshare", "--pid", "--fork", "--kill-child", "--mount-proc"] as const;

/**
 * One process in another PID namespace, as a container's, that runs the commands one after another: the CLI
 * loads once there instead of once per command (see oneCliProcess.ts). Those that run at the same time start
 * a namespace of their own each.
 */
const container = new OneCliProcess(UNSHARED, true);
afterAll(() => container.stop());

/**
 * `svc <args>` in another PID namespace, as `docker exec` runs it beside the host's: its exit code, and its
 * stdout and stderr in the order they arrived.
 */
async function svcInOtherNamespace(
  args: readonly string[],
): Promise<{ code: number | null; stdout: string }> {
  const env = { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir };
  if (container.free) {
    const { code, output } = await container.run(args, env);
    return { code, stdout: output };
  }
  const child = spawn(UNSHARED[0], [...UNSHARED.slice(1), process.execPath, ...SVC_ARGV, ...args], {
    env: { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stdout += d));
  return new Promise((resolve) => child.on("exit", (code) => resolve({ code, stdout })));
}

// Fourteen commands, most one after another, each a process start in a namespace of its own: 10-20 s on the
// 2-core machine while the suite runs, and once past 30 s.
describe("gateway.pid seen from another PID namespace", { timeout: 60_000 }, () => {
  it.runIf(UNSHARE)(
    "svc gateway status, stop and start keep the live gateway's gateway.pid and ask its /health: running there when it answers, else what that likely means",
    async () => {
      home = tempHome();
      home.write("config.yaml", stringify(cliConfig({ a: { secret: "s" } })), 0o600);
      const gateway = await startCliGateway(home, children);
      const pidFile = join(home.dir, "gateway.pid");
      const written = readFileSync(pidFile, "utf8");
      const status = await svcInOtherNamespace(["gateway", "status"]);
      expect(readFileSync(pidFile, "utf8")).toBe(written);
      // The same network: the address gateway.json records answers.
      expect(status.code).toBe(0);
      expect(status.stdout).toMatch(
        new RegExp(
          `^Gateway: running \\(pid ${gateway.child.pid} of another PID namespace, pid:\\[\\d+\\], which this command cannot check: its /health answers\\)\nListening: 127\\.0\\.0\\.1:${gateway.port}\nHealth: ok\n$`,
        ),
      );
      // A start there is refused too, rather than taking the file over.
      const ns = "pid:\\[\\d+\\]";
      const start = await svcInOtherNamespace(["gateway", "run", "--port", "0"]);
      expect(start.code).toBe(2);
      expect(start.stdout).toMatch(
        new RegExp(
          `^svc: a gateway already runs on this SVC_HOME: pid ${gateway.child.pid} of another PID namespace \\(${ns}; this command runs in ${ns}\\) answers /health at 127\\.0\\.0\\.1:${gateway.port} — stop it where it was started`,
        ),
      );
      expect(readFileSync(pidFile, "utf8")).toBe(written);
      // stop and start ask its /health too: it runs there, where this command cannot signal it.
      const stop = await svcInOtherNamespace(["gateway", "stop"]);
      expect(stop.code).toBe(2);
      expect(stop.stdout).toMatch(
        new RegExp(
          `^svc: the gateway is running at 127\\.0\\.0\\.1:${gateway.port} in another PID namespace \\(${ns}; this command runs in ${ns}\\), as pid ${gateway.child.pid} there \\(${pidFile}\\), which this command cannot signal — stop it where it was started \\(docker exec <container> svc gateway stop, or on the host\\), or with kill -TERM ${gateway.child.pid} in that namespace\n$`,
        ),
      );
      const startThere = await svcInOtherNamespace(["gateway", "start"]);
      expect(startThere.code).toBe(2);
      expect(startThere.stdout).toMatch(
        new RegExp(
          `^svc: a gateway already runs on this SVC_HOME: pid ${gateway.child.pid} of another PID namespace \\(${ns}; this command runs in ${ns}\\) answers /health at 127\\.0\\.0\\.1:${gateway.port} — stop it where it was started`,
        ),
      );
      expect(readFileSync(pidFile, "utf8")).toBe(written);
      // The other commands that use the running gateway ask its /health too, rather than refusing its pid:
      // those that reach it over HTTP use it, those that would signal it say where to run what.
      const [subscribe, reload, list] = await Promise.all([
        svcInOtherNamespace(["webhook", "subscribe", "sub"]),
        svcInOtherNamespace(["mcp", "reload"]),
        svcInOtherNamespace(["mcp", "list", "--no-check"]),
      ]);
      expect(subscribe.code).toBe(0);
      expect(subscribe.stdout).toContain(`http://127.0.0.1:${gateway.port}/webhooks/sub`);
      expect(reload.code).toBe(2);
      expect(reload.stdout).toMatch(
        new RegExp(
          `^svc: the gateway is running at 127\\.0\\.0\\.1:${gateway.port} in another PID namespace \\(${ns}; this command runs in ${ns}\\), as pid ${gateway.child.pid} there \\(${pidFile}\\), which this command cannot signal — run svc mcp reload where it was started \\(docker exec <container> svc mcp reload, or on the host\\), or kill -HUP ${gateway.child.pid} in that namespace\n$`,
        ),
      );
      expect(list).toEqual({
        code: 0,
        stdout: `No MCP servers in ${join(home.dir, "config.yaml")} (add one: svc mcp add <name> -- <command>).\n`,
      });
      const sent = await svcInOtherNamespace(["webhook", "test", "sub"]);
      expect(sent.code).toBe(0);
      expect(sent.stdout).toContain("202");
      const add = await svcInOtherNamespace(["mcp", "add", "docs", "https://mcp.example.com/mcp"]);
      expect(add.code).toBe(0);
      expect(add.stdout).toMatch(
        new RegExp(
          `\nCheck it: svc mcp test docs; the running gateway picks the change up with svc mcp reload\nNote: that gateway runs in another PID namespace \\(pid ${gateway.child.pid} there, ${ns}; this command runs in ${ns}\\), where svc mcp reload from here cannot signal it: run svc mcp reload where it was started \\(docker exec <container> svc mcp reload, or on the host\\)\\.\n$`,
        ),
      );
      const setup = await svcInOtherNamespace(["gateway", "setup", "--non-interactive"]);
      expect(setup.code).toBe(0);
      expect(setup.stdout).toMatch(
        new RegExp(
          `\nThe gateway is running \\(pid ${gateway.child.pid} of another PID namespace\\) with this adapter and port already: the new secret applies once it reloads \\.env — kill -HUP ${gateway.child.pid} \\(no restart needed\\), where it was started: in its PID namespace ${ns} \\(docker exec <container> …, or on the host\\)\n$`,
        ),
      );
      expect(readFileSync(pidFile, "utf8")).toBe(written);
      // Killed (its files left behind): nothing answers at the recorded address.
      gateway.child.kill("SIGKILL");
      await gateway.exited;
      const gone = await svcInOtherNamespace(["gateway", "status"]);
      expect(gone.code).toBe(4);
      expect(gone.stdout).toMatch(
        new RegExp(
          `^Gateway: unknown — ${pidFile} names pid ${gateway.child.pid} of another PID namespace \\(pid:\\[\\d+\\]; this command runs in pid:\\[\\d+\\]: .*\\) — whether that gateway runs cannot be told from here: run svc gateway status\\|stop where it was started.*\nHealth: no answer at 127\\.0\\.0\\.1:${gateway.port}, where ${join(home.dir, "gateway.json")} says it listens \\(this command may not reach that address, or the gateway has stopped\\)\n$`,
        ),
      );
      const staleStop = await svcInOtherNamespace(["gateway", "stop"]);
      expect(staleStop.code).toBe(2);
      expect(staleStop.stdout).toMatch(
        new RegExp(
          `^svc: ${pidFile} names pid ${gateway.child.pid} of another PID namespace \\(${ns}; this command runs in ${ns}\\), which this command cannot signal, and nothing answers /health at 127\\.0\\.0\\.1:${gateway.port}, where ${join(home.dir, "gateway.json")} says it listens — most likely the gateway that wrote it is gone \\(killed, or its container stopped\\) and left it behind; .* if no gateway runs there any more, remove ${pidFile} and ${join(home.dir, "gateway.json")};`,
        ),
      );
      // A start there waits for gateway.pid to stay untouched, then replaces it: gatewayKilledInNamespace.test.ts.
      // svc mcp reload says what it asked, in the words of svc gateway status, rather than "no live pid".
      const staleReload = await svcInOtherNamespace(["mcp", "reload"]);
      expect(staleReload.code).toBe(1);
      expect(staleReload.stdout).toMatch(
        new RegExp(
          `^svc: nothing was reloaded: ${pidFile} names pid ${gateway.child.pid} of another PID namespace \\(${ns}; this command runs in ${ns}: .*\\) — whether that gateway runs cannot be told from here: .*\nHealth: no answer at 127\\.0\\.0\\.1:${gateway.port}, where ${join(home.dir, "gateway.json")} says it listens \\(this command may not reach that address, or the gateway has stopped\\)\n$`,
        ),
      );
      expect(readFileSync(pidFile, "utf8")).toBe(written);
    },
  );
});
