import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { processStat } from "../../../src/io/processAlive.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { signalProcess } from "../../helpers/process.js";
import { cliConfig, type Foreground, killIfRunning, runForeground, svc, waitFor } from "./svc.js";

/**
 * A gateway suspended by Ctrl-Z in the terminal of `svc gateway run` (or SIGSTOP): `status` said only "not
 * answering", and `stop` waited out its whole timeout (the SIGTERM waits for the process to run again),
 * then told the user to kill -9 it.
 */
let home: TempHome | undefined;
let gateway: Foreground | undefined;
afterEach(async () => {
  await killIfRunning(gateway);
  gateway = undefined;
  home?.cleanup();
});

describe("a suspended gateway (Ctrl-Z, SIGSTOP)", { timeout: 60_000 }, () => {
  it("status says it is suspended and how to resume it; stop continues it and it stops gracefully", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig({ r: { secret: "INSECURE_NO_AUTH" } })));
    gateway = await runForeground(home);
    const pid = gateway.child.pid as number;
    signalProcess(pid, "SIGSTOP");
    const status = await svc(home, ["gateway", "status"]);
    expect(status.stdout).toContain(
      `Health: not answering — its process is suspended (Ctrl-Z in the terminal of svc gateway run, or SIGSTOP), and requests wait: resume it with fg in that terminal, or kill -CONT ${pid}\n`,
    );
    expect(status.code).toBe(1);
    const stop = await svc(home, ["gateway", "stop", "--timeout", "30"]);
    expect(stop.stderr).toBe("");
    expect(stop.stdout).toContain("Gateway stopped\n");
    expect(stop.code).toBe(0);
    expect(await gateway.exited).toBe(0);
    expect(gateway.stdout()).toContain("[gateway] SIGTERM received, stopping");
  });

  it("status of a gateway suspended while it drains: stopping, and that the drain waits for it to resume", async () => {
    const own = tempHome();
    home = own;
    own.write(
      "config.yaml",
      stringify({
        ...cliConfig({ r: { secret: "INSECURE_NO_AUTH" } }),
        agent: { provider: "command", command: ["sh", "-c", "cat >/dev/null; sleep 30"] },
        gateway: { drain_timeout_seconds: 30 },
      }),
    );
    const run = await runForeground(own);
    gateway = run;
    const pid = run.child.pid as number;
    expect((await postJson(`http://127.0.0.1:${run.port}/webhooks/r`, {})).status).toBe(202);
    signalProcess(pid, "SIGTERM");
    const log = () => readFileSync(join(own.dir, "logs", "gateway.log"), "utf8");
    await waitFor(() => log().includes("[gateway] SIGTERM received, stopping"), "the stop");
    signalProcess(pid, "SIGSTOP");
    await waitFor(() => processStat(pid)?.state === "T", "the suspension");
    const status = await svc(own, ["gateway", "status"]);
    expect(status.stdout).toMatch(
      new RegExp(
        `Health: stopping since \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z \\(no new requests; runs in flight finish or are kept for the next start\\); its process is suspended \\(SIGSTOP\\): the drain waits — kill -CONT ${pid}, or svc gateway stop, which resumes it\n`,
      ),
    );
    expect(status.code).toBe(1);
    // As said: stop continues it (the drain then goes on past this short wait).
    const stop = await svc(own, ["gateway", "stop", "--timeout", "0.2"]);
    expect(stop.code).toBe(1);
    expect(processStat(pid)?.state).not.toBe("T");
  });
});
