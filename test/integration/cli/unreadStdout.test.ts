import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { cliConfig, type Foreground, killIfRunning, runForeground } from "./svc.js";

/**
 * A supervisor or log collector that stops reading the gateway's stdout pipe: Node writes to a pipe without
 * blocking and queues what the pipe does not take, so the gateway goes on answering, but the queue would
 * grow with every log line for as long as nobody reads. It is bounded; gateway.log keeps every line.
 */
describe("svc gateway run with a stdout nobody reads", { timeout: 90_000 }, () => {
  let home: TempHome;
  let gateway: Foreground | undefined;
  afterEach(async () => {
    await killIfRunning(gateway);
    gateway = undefined;
    home.cleanup();
  });

  it("keeps answering, leaves lines out of stdout past its backlog (said on stderr), and counts them once read again", async () => {
    home = tempHome();
    const config = cliConfig({ r: { secret: "INSECURE_NO_AUTH" } }) as { platforms: { webhook: object } };
    config.platforms.webhook = { ...config.platforms.webhook, access_log: true, rate_limit: 100_000 };
    home.write("config.yaml", stringify(config));
    gateway = await runForeground(home);
    const run = gateway;
    // The reader stops: once the pipe and this side's buffer are full, every later line waits in the gateway.
    run.child.stdout?.pause();
    // Each event logs its echo agent's reply (the payload, up to 4000 characters) and an access line.
    const pad = "x".repeat(3500);
    let sent = 0;
    while (!run.stderr().includes("[log] stdout is not being read")) {
      if (sent >= 3000) throw new Error(`no backlog notice after ${sent} events: ${run.stderr()}`);
      const res = await postJson(`http://127.0.0.1:${run.port}/webhooks/r`, { sent, pad });
      expect(res.status).toBe(202);
      sent += 1;
    }
    expect(run.stderr()).toContain(
      "[log] stdout is not being read (1048576 bytes waiting): log lines are left out of it until it is, so memory does not grow — the log file keeps them",
    );
    // Said once, however many lines are left out.
    expect(run.stderr().split("[log] stdout is not being read").length - 1).toBe(1);
    const health = await fetch(`http://127.0.0.1:${run.port}/health`);
    expect(health.status).toBe(200);
    // Read again: the next lines say how many were left out.
    run.child.stdout?.resume();
    let last = 0;
    while (!/\[log\] stdout is read again: \d+ log line\(s\) were left out of it/.test(run.stdout())) {
      if (last >= 200) throw new Error("no line counting what was left out");
      await postJson(`http://127.0.0.1:${run.port}/webhooks/r`, { last });
      last += 1;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // gateway.log has every line: an access line for each event sent while stdout was not read.
    const log = readFileSync(join(home.dir, "logs", "gateway.log"), "utf8");
    expect(log.split("[access] POST r 202").length - 1).toBeGreaterThanOrEqual(sent);
    run.child.kill("SIGTERM");
    expect(await run.exited).toBe(0);
  });
});
