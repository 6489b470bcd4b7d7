import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync, readlinkSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { SVC_ARGV } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { killIfRunning, svc } from "../cli/svc.js";

interface Running {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
}

function runSvc(home: TempHome, args: string[], env: Record<string, string> = {}): Running {
  const child = spawn(process.execPath, [...SVC_ARGV, ...args], {
    env: { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout?.on("data", (d) => (out += d));
  child.stderr?.on("data", (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, exited };
}

async function waitForLine(run: Running, pattern: RegExp, timeoutMs = 20_000): Promise<RegExpExecArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = pattern.exec(run.stdout());
    if (match) return match;
    if (run.child.exitCode !== null)
      throw new Error(`svc exited (${run.child.exitCode}): ${run.stdout()}\n${run.stderr()}`);
    if (Date.now() > deadline) throw new Error(`no ${pattern} in: ${run.stdout()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const LISTENING = /\[webhook\] Listening on 127\.0\.0\.1:(\d+) — routes: (.*)\n/;

describe("svc gateway run (subprocess)", () => {
  let home: TempHome;
  let running: Running | undefined;
  afterEach(async () => {
    await killIfRunning(running);
    running = undefined;
    home.cleanup();
  });

  it("prints the listening line with the real port and route names, writes the pid file; SIGHUP re-reads config.yaml and swaps the routes; stops on SIGTERM with exit 0", async () => {
    // One gateway for the start, the reload and the stop (they were two tests, each starting its own).
    home = tempHome();
    const config = (routes: Record<string, unknown>) =>
      stringify({ platforms: { webhook: { enabled: true, host: "127.0.0.1", routes } } });
    const first = { github: { secret: "INSECURE_NO_AUTH" }, stripe: { secret: "x" } };
    home.write("config.yaml", config(first));
    running = runSvc(home, ["gateway", "run", "--port", "0"]);
    const [, port, routes] = await waitForLine(running, LISTENING);
    expect(routes).toBe("github, stripe");
    expect(Number(port)).toBeGreaterThan(0);
    // The pid alone (what `kill -HUP $(cat …)` reads); gateway.json records its PID namespace, and the
    // state backend it started with (its name only: never a Redis URL).
    expect(readFileSync(join(home.dir, "gateway.pid"), "utf8")).toBe(`${running.child.pid}\n`);
    expect(JSON.parse(readFileSync(join(home.dir, "gateway.json"), "utf8"))).toMatchObject({
      pid: running.child.pid,
      pid_namespace: readlinkSync("/proc/self/ns/pid"),
      state_backend: "local",
      // The drain it runs with, from which `svc gateway stop` sets its default wait (the default, 30 s).
      drain_timeout_seconds: 30,
    });
    expect(readFileSync(join(home.dir, "logs", "gateway.log"), "utf8")).toContain(
      `[webhook] Listening on 127.0.0.1:${port} — routes: github, stripe`,
    );
    expect(await postJson(`http://127.0.0.1:${port}/webhooks/github`, {})).toMatchObject({ status: 202 });

    const url = `http://127.0.0.1:${port}/webhooks/two`;
    expect((await postJson(url, {})).status).toBe(404);
    // A reload that changes gateway.drain_timeout_seconds records the new drain in gateway.json.
    home.write(
      "config.yaml",
      stringify({
        gateway: { drain_timeout_seconds: 5 },
        platforms: {
          webhook: {
            enabled: true,
            host: "127.0.0.1",
            routes: { ...first, two: { secret: "INSECURE_NO_AUTH" } },
          },
        },
      }),
    );
    running.child.kill("SIGHUP");
    await waitForLine(running, /Reloaded .* routes: github, stripe, two/);
    expect((await postJson(url, {})).status).toBe(202);
    expect(JSON.parse(readFileSync(join(home.dir, "gateway.json"), "utf8"))).toMatchObject({
      pid: running.child.pid,
      drain_timeout_seconds: 5,
    });

    running.child.kill("SIGTERM");
    expect(await running.exited).toBe(0);
    expect(existsSync(join(home.dir, "gateway.pid"))).toBe(false);
  });

  it("with no config file: embedded default on loopback, routes (none), and how to add one", async () => {
    home = tempHome();
    running = runSvc(home, ["gateway", "run", "--port", "0"]);
    const [, , routes] = await waitForLine(running, LISTENING);
    expect(routes).toBe("(none)");
    await waitForLine(running, /svc webhook subscribe <name>/);
    expect(running.stdout()).toContain("routes:");
    running.child.kill("SIGINT");
    expect(await running.exited).toBe(0);
  });

  it("startup validation: every broken rule of spec 2.2 is printed and the exit code is non-zero", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({
        platforms: {
          telegram: { enabled: true, token: "t" },
          webhook: {
            enabled: true,
            host: "0.0.0.0",
            routes: {
              nosecret: {},
              logonly: { secret: "s", deliver_only: true },
              both: { secret: "s", deliver: "telegram", deliver_only: true, cron_job: "j" },
              grouped: { secret: "s", cron_job: "j", coalesce: { key: "pr" } },
              open: { secret: "INSECURE_NO_AUTH" },
            },
          },
        },
      }),
    );
    running = runSvc(home, ["gateway", "run", "--port", "0"]);
    expect(await running.exited).toBe(1);
    const err = running.stderr();
    expect(err).toContain("platforms.webhook.routes.nosecret.secret: missing");
    expect(err).toContain("platforms.webhook.routes.logonly.deliver_only: needs a real delivery target");
    expect(err).toContain("platforms.webhook.routes.both: deliver_only and cron_job cannot be combined");
    expect(err).toContain("platforms.webhook.routes.grouped.coalesce: cannot be combined");
    expect(err).toContain(
      "platforms.webhook.routes.open.secret: INSECURE_NO_AUTH is only allowed on a loopback bind",
    );
    expect(running.stdout()).not.toContain("Listening");
  });

  it("INSECURE_NO_AUTH on a non-loopback --host override is refused; the refusal names --host as where the address came from, not the file's host (which is loopback)", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({
        platforms: {
          webhook: { enabled: true, host: "127.0.0.1", routes: { open: { secret: "INSECURE_NO_AUTH" } } },
        },
      }),
    );
    // One start for both facets: they were two tests starting the same command on the same config.
    running = runSvc(home, ["gateway", "run", "--port", "0", "--host", "0.0.0.0"]);
    expect(await running.exited).toBe(1);
    expect(running.stderr()).toContain("INSECURE_NO_AUTH is only allowed on a loopback bind");
    expect(running.stderr()).toContain(
      "platforms.webhook.routes.open.secret: INSECURE_NO_AUTH is only allowed on a loopback bind (127.0.0.1, localhost, ::1), but --host is 0.0.0.0 (it overrides platforms.webhook.host) — set a real secret or bind to 127.0.0.1",
    );
  });

  it("listening on every interface because of --host, the WARN's fix names --host, not the file's host (loopback already)", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({
        platforms: { webhook: { enabled: true, host: "127.0.0.1", routes: { r: { secret: "x" } } } },
      }),
      0o600,
    );
    running = runSvc(home, ["gateway", "run", "--port", "0", "--host", "0.0.0.0"]);
    const [line = ""] = await waitForLine(running, /.*Listening on every network interface.*\n/);
    expect(line).toContain(
      "anyone who can reach this machine can post to its routes — give --host 127.0.0.1 (it overrides platforms.webhook.host) to accept senders on this machine only, or keep it and make sure every route has a secret",
    );
  });

  /** `svc gateway run` on a port another program holds, with the webhook section `webhook(port)`: its port and stderr. */
  async function startOnHeldPort(
    webhook: (port: number) => Record<string, unknown>,
  ): Promise<{ port: number; stderr: string }> {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    try {
      const port = (holder.address() as AddressInfo).port;
      home = tempHome();
      home.write("config.yaml", stringify({ platforms: { webhook: webhook(port) } }), 0o600);
      running = runSvc(home, ["gateway", "run"]);
      expect(await running.exited).toBe(1);
      return { port, stderr: running.stderr() };
    } finally {
      holder.close();
    }
  }

  it("a port taken by another program is refused naming the port key as written: platforms.webhook.extra.port", async () => {
    const { port, stderr } = await startOnHeldPort((held) => ({
      enabled: true,
      host: "127.0.0.1",
      port: 9,
      extra: { port: held },
      routes: { r: { secret: "x" } },
    }));
    expect(stderr).toContain(`cannot listen on 127.0.0.1:${port} — another program listens on port ${port}`);
    expect(stderr).toContain("choose another port (platforms.webhook.extra.port, WEBHOOK_PORT or --port)");
  });

  for (const [server, setting] of [
    ["ingress threads (workers: 2)", { workers: 2 }],
    ["node:http", { http_server: "node" }],
  ] as const)
    it(`a port taken by another program is refused by ${server} as by one uWS listener, with no system reason between`, async () => {
      const { port, stderr } = await startOnHeldPort((held) => ({
        enabled: true,
        host: "127.0.0.1",
        port: held,
        ...setting,
        routes: { r: { secret: "x" } },
      }));
      expect(stderr).toContain(
        `svc: cannot listen on 127.0.0.1:${port} — another program listens on port ${port}`,
      );
    });

  it("a host under extra that is no address of this machine is named there, by the start and by svc config check", async () => {
    home = tempHome();
    // 192.0.2.1 (TEST-NET-1) is no address of this machine; the direct host, 127.0.0.1, is not used.
    home.write(
      "config.yaml",
      stringify({
        platforms: {
          webhook: {
            enabled: true,
            host: "127.0.0.1",
            extra: { host: "192.0.2.1" },
            routes: { r: { secret: "x" } },
          },
        },
      }),
      0o600,
    );
    const fix = "set platforms.webhook.extra.host (or --host) to one of its addresses, 0.0.0.0 or 127.0.0.1";
    running = runSvc(home, ["gateway", "run", "--port", "0"]);
    expect(await running.exited).toBe(1);
    expect(running.stderr()).toContain(`192.0.2.1 is not an address of this machine — ${fix}`);
    // svc config check starts no process: it runs in this worker.
    const check = await svc(home, ["config", "check"]);
    expect(check.code).toBe(1);
    expect(check.stdout + check.stderr).toContain(
      `config.yaml: platforms.webhook.extra.host: cannot listen on 192.0.2.1`,
    );
    expect(check.stdout + check.stderr).toContain(fix);
  });

  it("a bad config names the file and key; a disabled adapter says how to enable it", async () => {
    home = tempHome();
    home.write("config.yaml", stringify({ platforms: { webhook: { enabled: true, prot: 1 } } }));
    running = runSvc(home, ["gateway", "run", "--port", "0"]);
    expect(await running.exited).toBe(1);
    expect(running.stderr()).toContain(
      `${join(home.dir, "config.yaml")}: platforms.webhook: unknown key "prot"`,
    );
    home.write("config.yaml", stringify({ platforms: { webhook: { enabled: false } } }));
    running = runSvc(home, ["gateway", "run", "--port", "0"]);
    expect(await running.exited).toBe(1);
    expect(running.stderr()).toContain("svc gateway setup");
    expect(running.stderr()).toContain("WEBHOOK_ENABLED=true");
  });
});
