import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { signalProcess } from "../../helpers/process.js";
import { cliConfig, type Foreground, killIfRunning, runForeground, svc } from "./svc.js";

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
});
