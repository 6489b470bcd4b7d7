import { spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { SVC_ARGV } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { cliConfig, type Foreground, killIfRunning, runForeground, svc, waitFor } from "./svc.js";

/** `svc gateway run` as a user runs it: its output piped somewhere, signals from a shell or a supervisor. */
describe("svc gateway run: output and signals", { timeout: 60_000 }, () => {
  let home: TempHome;
  let gateway: Foreground | undefined;
  afterEach(async () => {
    await killIfRunning(gateway);
    gateway = undefined;
    // The tests that run at once (withRunThatDrains) have homes of their own and leave this one unset.
    home?.cleanup();
  });

  const gatewayLog = () => readFileSync(join(home.dir, "logs", "gateway.log"), "utf8");
  /**
   * A gateway whose agent runs until it is stopped, draining for up to `drainSeconds` when told to stop, in a
   * home of the test's own (not the shared `home`): the three tests that use it run at once, each mostly
   * waiting on its gateway's stop. `finished`: the test's onTestFinished, which kills it and removes the home.
   */
  const withRunThatDrains = async (
    drainSeconds: number,
    finished: (fn: () => Promise<void>) => void,
  ): Promise<{ run: Foreground; home: TempHome; log(): string; stopping(): Promise<void> }> => {
    const own = tempHome();
    let run: Foreground | undefined;
    finished(async () => {
      await killIfRunning(run);
      own.cleanup();
    });
    own.write(
      "config.yaml",
      stringify({
        ...cliConfig({ r: { secret: "INSECURE_NO_AUTH" } }),
        agent: { provider: "command", command: ["sh", "-c", "cat >/dev/null; sleep 30"] },
        gateway: { drain_timeout_seconds: drainSeconds },
      }),
    );
    const started = await runForeground(own, ["--port", "0"]);
    run = started;
    const log = () => readFileSync(join(own.dir, "logs", "gateway.log"), "utf8");
    return {
      run: started,
      home: own,
      log,
      /** SIGTERM, and the gateway's word that it is stopping. */
      async stopping() {
        started.child.kill("SIGTERM");
        await waitFor(() => log().includes("[gateway] SIGTERM received, stopping"), "the stop");
      },
    };
  };

  it("keeps running when the reader of its stdout goes away (svc gateway run | head -1), and still stops cleanly", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig({ r: { secret: "INSECURE_NO_AUTH" } })));
    gateway = await runForeground(home);
    const { port } = gateway;
    // The pipe's read end is closed, as when `head` exits: every later write to stdout fails with EPIPE.
    gateway.child.stdout?.destroy();
    gateway.child.stderr?.destroy();
    for (let i = 0; i < 3; i++) {
      const res = await postJson(`http://127.0.0.1:${port}/webhooks/r`, { i });
      expect(res.status).toBe(202);
      // The run's reply is logged (stdout and gateway.log): wait for it before the next request.
      await waitFor(() => gatewayLog().split("r reply:").length - 1 === i + 1, `reply ${i + 1}`);
    }
    expect(gateway.child.exitCode).toBeNull();
    gateway.child.kill("SIGTERM");
    expect(await gateway.exited).toBe(0);
    expect(existsSync(join(home.dir, "gateway.pid"))).toBe(false);
    expect(gatewayLog()).toContain("[gateway] SIGTERM received, stopping");
    // The last line, once everything has stopped: a stop that finished, not one killed mid-way.
    expect(gatewayLog().trimEnd().split("\n").at(-1)).toContain("INFO [gateway] stopped (exit 0)");
  });

  it("a config.yaml broken before SIGHUP: the running config is kept, and why is in gateway.log and on stderr", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig({ one: { secret: "INSECURE_NO_AUTH" } })));
    gateway = await runForeground(home);
    const run = gateway;
    home.write(
      "config.yaml",
      stringify(cliConfig({ one: { secret: "INSECURE_NO_AUTH", evnts: ["push"] }, two: {} })),
    );
    run.child.kill("SIGHUP");
    await waitFor(() => run.stderr().includes("reload refused"), "the refusal on stderr");
    expect(run.stderr()).toMatch(/platforms\.webhook\.routes\.one: unknown key "evnts"/);
    // gateway.log is written once per event-loop turn: its line may follow the one on stderr.
    await waitFor(
      () => gatewayLog().includes("reload refused, keeping the running config"),
      "the refusal in gateway.log",
    );
    const logged = gatewayLog();
    expect(logged).toMatch(/config\.yaml: platforms\.webhook\.routes\.one: unknown key "evnts"/);
    expect(await postJson(`http://127.0.0.1:${run.port}/webhooks/one`, {})).toMatchObject({ status: 202 });
    expect((await postJson(`http://127.0.0.1:${run.port}/webhooks/two`, {})).status).toBe(404);
    expect(run.child.exitCode).toBeNull();
  });

  /**
   * `svc gateway run` with a preload that sends `signal` to the process as soon as a listener for
   * `heldFirst` is added (svc's entry holding its first signal), so it comes while the program loads.
   */
  function runSignalledWhileLoading(heldFirst: string, signal: NodeJS.Signals) {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig({ r: { secret: "INSECURE_NO_AUTH" } })));
    const preload = `data:text/javascript,let sent=false;process.on("newListener",(e)=>{if(e==="${heldFirst}"&&!sent){sent=true;setImmediate(()=>process.kill(process.pid,"${signal}"))}})`;
    const child = spawn(
      process.execPath,
      ["--import", preload, ...SVC_ARGV, "gateway", "run", "--port", "0"],
      {
        env: { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const output = { text: "" };
    child.stdout?.on("data", (d) => (output.text += d));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on("exit", (code, signal) => resolve({ code, signal })),
    );
    return { child, output, exited };
  }

  it("a SIGTERM while the gateway's modules still load (before it listens) ends it with exit 0, not killed by the signal", async () => {
    const { output, exited } = runSignalledWhileLoading("SIGTERM", "SIGTERM");
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(existsSync(join(home.dir, "gateway.pid"))).toBe(false);
    expect(output.text).toContain("[gateway] SIGTERM received during startup, stopping");
    // The log's last line says the stop finished, as after any stop.
    expect(gatewayLog().trimEnd().split("\n").at(-1)).toMatch(/\[gateway\] stopped \(exit 0\)$/);
  });

  it("a SIGHUP while the program still loads (a reload asked for right after a start) is let go: the gateway starts", async () => {
    // Sent as soon as the entry holds its first signal, before the rest of the program has loaded.
    const { child, output, exited } = runSignalledWhileLoading("SIGINT", "SIGHUP");
    const listening = new Promise<boolean>((resolve) => {
      child.stdout?.on("data", () => {
        if (output.text.includes("Listening on")) resolve(true);
      });
      void exited.then(() => resolve(false));
    });
    expect(await listening).toBe(true);
    // Not let go silently: a supervisor's reload that came too early is said, with why nothing reloads.
    expect(gatewayLog()).toContain(
      `[gateway] SIGHUP received during startup, before ${join(home.dir, "config.yaml")} was read: nothing to reload — the start reads it`,
    );
    child.kill("SIGTERM");
    expect(await exited).toEqual({ code: 0, signal: null });
  });

  it.concurrent("a second signal while runs drain says the gateway is already stopping, and the drain goes on", async ({
    onTestFinished,
  }) => {
    // Long enough that the second signal surely comes while the run drains.
    const { run, home, log, stopping } = await withRunThatDrains(3, onTestFinished);
    const accepted = await postJson(`http://127.0.0.1:${run.port}/webhooks/r`, {});
    expect(accepted.status).toBe(202);
    await stopping();
    run.child.kill("SIGINT");
    expect(await run.exited).toBe(0);
    expect(log()).toContain(
      "[gateway] SIGINT received again: already stopping — runs still in flight get the rest of gateway.drain_timeout_seconds, then what has not finished is kept for the next start",
    );
    expect(readFileSync(join(home.dir, "webhook-pending-runs.json"), "utf8")).toContain(
      accepted.body.delivery_id as string,
    );
  });

  // One draining gateway for what status, reload, add/remove, a SIGHUP and a second stop say of it (they were
  // two tests, each starting its own); the second stop, which signals it again, comes last.
  it.concurrent("a gateway that drains its runs: svc gateway status says it is stopping, not that it does not answer; svc mcp reload says it is stopping (exit 1), and a SIGHUP is logged as ignored", async ({
    onTestFinished,
  }) => {
    const { run, home, log, stopping } = await withRunThatDrains(30, onTestFinished);
    expect((await svc(home, ["gateway", "status"])).stdout).toContain("Health: ok");
    expect((await postJson(`http://127.0.0.1:${run.port}/webhooks/r`, {})).status).toBe(202);
    await stopping();
    const status = await svc(home, ["gateway", "status"]);
    expect(status.code).toBe(1);
    expect(status.stdout).toMatch(
      /Health: stopping since \d{4}-\d\d-\d\dT[\d:.]+Z \(no new requests; runs in flight finish or are kept for the next start\)/,
    );

    const reload = await svc(home, ["mcp", "reload", "--wait", "2"]);
    expect(reload.code).toBe(1);
    expect(reload.stdout).toBe("");
    expect(reload.stderr).toMatch(
      /^svc: the gateway \(pid \d+\) is stopping \(since \d{4}-\d\d-\d\dT[\d:.]+Z\) and ignores a reload, so nothing was reloaded; the next start \(svc gateway start\) reads .*config\.yaml\n$/,
    );
    // svc mcp add and remove do not send the user to that reload: the next start reads the change.
    const note =
      /^Note: the gateway \(pid \d+\) is stopping \(since \d{4}-\d\d-\d\dT[\d:.]+Z\) and ignores a reload: the next start \(svc gateway start\) reads the change$/m;
    const added = await svc(home, ["mcp", "add", "fx", "--", "mcp-fixture-not-installed"]);
    expect(added.code).toBe(0);
    expect(added.stdout).not.toContain("svc mcp reload");
    expect(added.stdout).toMatch(note);
    const removed = await svc(home, ["mcp", "remove", "fx"]);
    expect(removed.code).toBe(0);
    expect(removed.stdout).not.toContain("svc mcp reload");
    expect(removed.stdout).toMatch(note);
    run.child.kill("SIGHUP");
    await waitFor(() => log().includes("SIGHUP received while stopping"), "the ignored SIGHUP");
    expect(log()).toContain(
      `[gateway] SIGHUP received while stopping: ignored — nothing is reloaded; the next start reads ${join(home.dir, "config.yaml")}`,
    );
    expect(run.child.exitCode).toBeNull();

    // A second stop (the first gave up waiting, or a supervisor's SIGTERM began it) says the stop is under way.
    const again = await svc(home, ["gateway", "stop", "--timeout", "0.2"]);
    expect(again.code).toBe(1);
    expect(again.stdout).toMatch(
      new RegExp(
        `^The gateway \\(pid ${run.child.pid}\\) is already stopping \\(since \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\); waiting for it to exit: pending coalesced events are dispatched and runs in flight finish`,
      ),
    );
  });

  it("a SIGHUP just before a stop with nothing to drain: the log says it was ignored before the stop ends", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig({ r: { secret: "INSECURE_NO_AUTH" } })));
    gateway = await runForeground(home);
    // The reload waits for the files to stay unchanged for a moment: a writer of its own (a process, so
    // that this one held up between the two signals on a loaded machine does not end the wait) keeps
    // config.yaml changing until the stop, which so begins while the reload waits (at most 2 s). The SIGTERM
    // follows a moment after: two signals sent back to back were seen handled in either order here, and a
    // SIGHUP handled after the stop began is said differently.
    const config = join(home.dir, "config.yaml");
    const writer = spawn(
      "sh",
      ["-c", 'i=0; while :; do i=$((i+1)); printf "# %s\\n" "$i" >> "$1"; sleep 0.02; done', "sh", config],
      { stdio: "ignore" },
    );
    try {
      await waitFor(() => readFileSync(config, "utf8").includes("# 2\n"), "the writer's second line");
      gateway.child.kill("SIGHUP");
      await new Promise((resolve) => setTimeout(resolve, 500));
      gateway.child.kill("SIGTERM");
      expect(await gateway.exited).toBe(0);
    } finally {
      writer.kill();
    }
    const lines = gatewayLog().trimEnd().split("\n");
    const ignored = lines.findIndex((line) =>
      line.endsWith(
        `INFO [gateway] SIGHUP received before the stop: ignored — the gateway began stopping while it waited for ${join(home.dir, "config.yaml")} and ${join(home.dir, ".env")} to stay unchanged; nothing is reloaded, the next start reads them`,
      ),
    );
    expect(ignored).toBeGreaterThan(
      lines.findIndex((line) => line.includes("[gateway] SIGTERM received, stopping")),
    );
    expect(lines.at(-1)).toContain("INFO [gateway] stopped (exit 0)");
  });

  it("svc gateway status of a gateway whose gateway.pid was removed: running, and how to stop it, not 'not running'", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig({ r: { secret: "INSECURE_NO_AUTH" } })));
    gateway = await runForeground(home, ["--port", "0"]);
    const pid = gateway.child.pid;
    rmSync(join(home.dir, "gateway.pid"));
    const status = await svc(home, ["gateway", "status"]);
    expect(status.code).toBe(1);
    expect(status.stdout).toBe(
      `Gateway: running (pid ${pid}), but ${join(home.dir, "gateway.pid")} does not name it (removed or overwritten since it started), so svc gateway stop cannot find it — stop it with kill ${pid} (it stops gracefully and removes its files), then start it again\nListening: 127.0.0.1:${gateway.port}\n`,
    );
    // stop says the same (exit 1), rather than "not running".
    const stop = await svc(home, ["gateway", "stop"]);
    expect(stop.code).toBe(1);
    expect(stop.stdout).toBe("");
    expect(stop.stderr).toContain(`svc: the gateway is running (pid ${pid}), but`);
    expect(gateway.child.exitCode).toBeNull();
  });

  it("a bug's unhandled rejection is logged and the gateway runs on; an uncaught exception stops it like SIGTERM (runs saved), exit 1", async () => {
    home = tempHome();
    const agent = {
      provider: "command",
      command: ["sh", "-c", "cat >/dev/null; sleep 30"],
    };
    home.write(
      "config.yaml",
      stringify({
        ...cliConfig({ r: { secret: "INSECURE_NO_AUTH" } }),
        agent,
        gateway: { drain_timeout_seconds: 0.5 },
      }),
    );
    // Stands in for a bug anywhere in the process: SIGUSR2 rejects a promise nobody handles, then throws.
    const bug =
      'data:text/javascript,let n=0;process.on("SIGUSR2",()=>{n++;if(n===1)Promise.reject(new Error("injected rejection"));else setImmediate(()=>{throw new Error("injected exception")})})';
    gateway = await runForeground(home, ["--port", "0"], {}, ["--import", bug]);
    const run = gateway;
    run.child.kill("SIGUSR2");
    await waitFor(() => gatewayLog().includes("injected rejection"), "the rejection in the log");
    expect(gatewayLog()).toContain("promise rejected unhandled); running on");
    const accepted = await postJson(`http://127.0.0.1:${run.port}/webhooks/r`, {});
    expect(accepted.status).toBe(202);
    run.child.kill("SIGUSR2");
    expect(await run.exited).toBe(1);
    expect(gatewayLog()).toContain("an uncaught exception); stopping");
    const saved = readFileSync(join(home.dir, "webhook-pending-runs.json"), "utf8");
    expect(saved).toContain(accepted.body.delivery_id as string);
    expect(existsSync(join(home.dir, "gateway.pid"))).toBe(false);
  });

  it("an uncaught exception in an ingress thread (workers: 2) stops the gateway as one on the main thread does: logged with its stack, runs saved, exit 1 (it aborted the process natively)", async () => {
    home = tempHome();
    const config = cliConfig(
      { r: { secret: "INSECURE_NO_AUTH" } },
      {
        agent: { provider: "command", command: ["sh", "-c", "cat >/dev/null; sleep 30"] },
        gateway: { drain_timeout_seconds: 0.5 },
      },
    );
    (config.platforms as { webhook: Record<string, unknown> }).webhook.workers = 2;
    home.write("config.yaml", stringify(config));
    // Stands in for a bug in an ingress thread: the first thread to find crash-now throws, outside any handler.
    const bug =
      'data:text/javascript,import{isMainThread}from"node:worker_threads";import{renameSync}from"node:fs";if(!isMainThread)setInterval(()=>{try{renameSync(process.env.SVC_HOME+"/crash-now",process.env.SVC_HOME+"/crash-taken")}catch{return}throw new Error("injected thread bug")},20).unref()';
    // Run from source, the thread is started from a file: an eval'd worker runs no --import preload.
    const threadSource = {
      SVC_TEST_INGRESS_THREAD: join(import.meta.dirname, "../../helpers/ingressThreadSource.mjs"),
    };
    gateway = await runForeground(home, ["--port", "0"], threadSource, ["--import", bug]);
    const run = gateway;
    const accepted = await postJson(`http://127.0.0.1:${run.port}/webhooks/r`, {});
    expect(accepted.status).toBe(202);
    home.write("crash-now", "");
    expect(await run.exited).toBe(1);
    const log = gatewayLog();
    expect(log).toContain("an uncaught exception); stopping");
    expect(log).toContain("injected thread bug");
    expect(log).toContain("[gateway] stopped (exit 1)");
    const saved = readFileSync(join(home.dir, "webhook-pending-runs.json"), "utf8");
    expect(saved).toContain(accepted.body.delivery_id as string);
    expect(existsSync(join(home.dir, "gateway.pid"))).toBe(false);
  });
});
