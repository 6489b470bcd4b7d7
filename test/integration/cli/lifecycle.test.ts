import { spawn } from "node:child_process";
import { chmodSync, existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { spawnUnreaped } from "../../helpers/process.js";
import { startTestRedis } from "../../helpers/redis.js";
import { svc } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

describe("svc gateway start/stop/status edge cases", { timeout: 90_000 }, () => {
  it("stop and status handle a stale pid file (process gone)", async () => {
    home = tempHome();
    // What a gateway killed with SIGKILL leaves behind: its pid file and the address it recorded.
    const state = JSON.stringify({
      pid: 999999,
      host: "127.0.0.1",
      port: 18999,
      started_at: "2026-11-30T00:00:00Z",
    });
    home.write("gateway.pid", "999999\n");
    home.write("gateway.json", state);
    const status = await svc(home, ["gateway", "status"]);
    expect(status).toMatchObject({ code: 3, stdout: "Gateway: not running\n" });
    expect(existsSync(join(home.dir, "gateway.json"))).toBe(false);
    home.write("gateway.pid", "999999\n");
    home.write("gateway.json", state);
    const stop = await svc(home, ["gateway", "stop"]);
    expect(stop.code).toBe(0);
    expect(stop.stdout).toContain("not running (removed the stale");
    expect(existsSync(join(home.dir, "gateway.pid"))).toBe(false);
    expect(existsSync(join(home.dir, "gateway.json"))).toBe(false);
    // A gateway.json of another pid (one starting now) is left alone.
    home.write("gateway.pid", "999999\n");
    home.write("gateway.json", state.replace("999999", "999998"));
    await svc(home, ["gateway", "status"]);
    expect(existsSync(join(home.dir, "gateway.json"))).toBe(true);
  });

  it("stop returns once the gateway exited, also when its parent has not collected it (a zombie)", async () => {
    home = tempHome();
    // A stand-in gateway of this home (its command line says gateway, its environment names the home)
    // that exits on SIGTERM, under a parent that never waits for it. It says when it is ready: until the
    // shell's fork has become node, /proc may show neither its command line nor its environment.
    const ready = join(home.dir, "stand-in.ready");
    const gatewayScript = `process.on("SIGTERM", () => process.exit(0)); require("node:fs").writeFileSync(${JSON.stringify(ready)}, ""); setInterval(() => {}, 1000)`;
    const { parent, pid } = await spawnUnreaped([process.execPath, "-e", gatewayScript, "gateway"], {
      PATH: process.env.PATH ?? "",
      SVC_HOME: home.dir,
    });
    try {
      await vi.waitFor(() => expect(existsSync(ready)).toBe(true), { timeout: 20_000, interval: 20 });
      home.write("gateway.pid", `${pid}\n`);
      // What a gateway started since would have recorded (another pid): the stop leaves it alone.
      const since = JSON.stringify({
        pid: 999998,
        host: "127.0.0.1",
        port: 18998,
        started_at: "2026-11-30T15:00:00Z",
      });
      home.write("gateway.json", since);
      const stop = await svc(home, ["gateway", "stop", "--timeout", "5"]);
      expect(stop).toMatchObject({ code: 0, stdout: expect.stringContaining("Gateway stopped") });
      expect(readFileSync(join(home.dir, "gateway.json"), "utf8")).toBe(since);
    } finally {
      parent.kill("SIGKILL");
    }
  });

  it("start reports a gateway that exits during startup, with its output: this start's output quoted whole when gateway.out already holds multibyte text from earlier starts; a gateway.out made wider is narrowed to 0600", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({
        platforms: { webhook: { enabled: true, host: "127.0.0.1", port: 0, routes: { r: { prompt: "x" } } } },
      }),
    );
    const earlier = "earlier start — café — 日本語 — ✓\n".repeat(40);
    home.write("logs/gateway.out", earlier);
    chmodSync(join(home.dir, "logs/gateway.out"), 0o644);
    const res = await svc(home, ["gateway", "start"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("the gateway exited (code 1) before it answered /health");
    expect(res.stderr).toContain("platforms.webhook.routes.r.secret: missing");
    expect(existsSync(join(home.dir, "gateway.pid"))).toBe(false);
    // It holds the gateway's log lines, as gateway.log does: narrowed to 0600 like it.
    expect(statSync(join(home.dir, "logs/gateway.out")).mode & 0o777).toBe(0o600);
    const quoted = res.stderr.slice(res.stderr.indexOf("before it answered /health:\n"));
    const line = quoted.split("\n").find((l) => l.includes("routes.r.secret")) ?? "";
    expect(line).toBe(
      `svc: ${join(home.dir, "config.yaml")}: platforms.webhook.routes.r.secret: missing — set a secret on the route, platforms.webhook.secret, or WEBHOOK_SECRET`,
    );
    expect(quoted).not.toContain("earlier start");
  });

  it("a pid reused by another process is not the gateway; a second gateway run of the same home is refused", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({ platforms: { webhook: { enabled: true, host: "127.0.0.1", port: 0 } } }),
    );
    const other = spawn("sleep", ["60"], { stdio: "ignore" });
    try {
      home.write("gateway.pid", `${other.pid}\n`);
      const [status, stop] = [await svc(home, ["gateway", "status"]), await svc(home, ["gateway", "stop"])];
      expect(status).toMatchObject({ code: 3, stdout: "Gateway: not running\n" });
      expect(stop.code).toBe(0);
      expect(other.exitCode).toBeNull();
      expect(other.signalCode).toBeNull();
      const started = await svc(home, ["gateway", "start", "--timeout", "60"]);
      expect(started.code).toBe(0);
      const pid = /pid (\d+)/.exec(started.stdout)?.[1];
      const second = await svc(home, ["gateway", "run", "--port", "0"]);
      expect(second.code).toBe(2);
      expect(second.stderr).toContain(`a gateway is already running for ${home.dir} (pid ${pid}`);
      const after = await svc(home, ["gateway", "status"]);
      expect(after.stdout).toContain(`running (pid ${pid})`);
    } finally {
      other.kill();
      await svc(home, ["gateway", "stop"]);
    }
  });

  it("start waits for what the gateway records, not its INFO line: it succeeds at SVC_LOG_LEVEL=warn; a gateway.pid naming another home's gateway is not this home's: status says not running, stop leaves it alone", async () => {
    home = tempHome();
    const other = tempHome();
    other.write(
      "config.yaml",
      stringify({ platforms: { webhook: { enabled: true, host: "127.0.0.1", port: 0 } } }),
    );
    try {
      const started = await svc(other, ["gateway", "start", "--timeout", "60"], {
        env: { SVC_LOG_LEVEL: "warn" },
      });
      expect(started.stderr).toBe("");
      expect(started.code).toBe(0);
      expect(started.stdout).toMatch(/^Gateway started: pid \d+, listening on 127\.0\.0\.1:\d+\n/);
      const pid = /pid (\d+)/.exec(started.stdout)?.[1];
      home.write("gateway.pid", `${pid}\n`);
      expect(await svc(home, ["gateway", "status"])).toMatchObject({
        code: 3,
        stdout: "Gateway: not running\n",
      });
      expect((await svc(home, ["gateway", "stop"])).code).toBe(0);
      const still = await svc(other, ["gateway", "status"]);
      expect(still).toMatchObject({ code: 0 });
      expect(still.stdout).toContain(`running (pid ${pid})`);
      expect(still.stdout).toContain("Health: ok");
    } finally {
      await svc(other, ["gateway", "stop"]);
      other.cleanup();
    }
  });

  it("an unknown SVC_LOG_LEVEL is refused, naming the variable and the levels", async () => {
    home = tempHome();
    const res = await svc(home, ["gateway", "run", "--port", "0"], { env: { SVC_LOG_LEVEL: "bogus" } });
    expect(res.code).toBe(2);
    expect(res.stderr).toBe(
      'svc: the environment variable SVC_LOG_LEVEL is "bogus" — use one of fatal, error, warn, info, debug, trace, silent\n',
    );
  });

  it("an MCP-only gateway (webhook adapter off) is started and reported without waiting for a listener", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({
        platforms: { webhook: { enabled: false } },
        mcp_servers: { idle: { command: "cat", lazy: true } },
      }),
    );
    try {
      const started = await svc(home, ["gateway", "start", "--timeout", "60"]);
      expect(started.code).toBe(0);
      expect(started.stdout).toMatch(
        /^Gateway started: pid \d+ — webhook adapter off, MCP servers and cron jobs only/,
      );
      const status = await svc(home, ["gateway", "status"]);
      expect(status.code).toBe(0);
      expect(status.stdout).toContain(
        "no HTTP listener — webhook adapter off, MCP servers and cron jobs only",
      );
    } finally {
      expect((await svc(home, ["gateway", "stop"])).stdout).toContain("Gateway stopped");
    }
  });

  it.each(["local", "redis"])(
    "two starts at once (state.backend: %s): one starts, the other says it is already running (pid, svc gateway stop)",
    async (backend) => {
      home = tempHome();
      // With redis no state directory is locked: only gateway.pid tells the two apart.
      const redis = backend === "redis" ? await startTestRedis() : undefined;
      home.write(
        "config.yaml",
        stringify({
          ...(redis === undefined
            ? {}
            : { state: { backend: "redis", redis_url: redis.url, redis_key_prefix: "twostarts" } }),
          platforms: {
            webhook: {
              enabled: true,
              host: "127.0.0.1",
              port: 0,
              routes: { r: { prompt: "x", secret: "concurrent-start-secret-1x9q" } },
            },
          },
        }),
      );
      try {
        // Port 0: each gets a port of its own, so the one refused is refused for the home, not the port.
        const both = await Promise.all([
          svc(home, ["gateway", "start", "--timeout", "60"]),
          svc(home, ["gateway", "start", "--timeout", "60"]),
        ]);
        const started = both.filter((r) => r.code === 0);
        expect(started).toHaveLength(1);
        const pid = /^Gateway started: pid (\d+),/.exec(started[0]?.stdout ?? "")?.[1];
        expect(pid).toBeDefined();
        const refused = both.find((r) => r.code !== 0);
        expect(refused).toMatchObject({
          code: 2,
          stdout: "",
          stderr: `svc: the gateway is already running (pid ${pid}, ${join(home.dir, "gateway.pid")}) — stop it with svc gateway stop\n`,
        });
      } finally {
        expect((await svc(home, ["gateway", "stop"])).stdout).toContain("Gateway stopped");
        await redis?.cleanup();
      }
    },
  );
});
