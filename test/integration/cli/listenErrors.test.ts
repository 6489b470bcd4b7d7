import { type ChildProcess, spawn } from "node:child_process";
import { chownSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { listenAddress } from "../../../src/cli/listenAddress.js";
import { startGateway } from "../../../src/gateway/index.js";
import { createLogger } from "../../../src/io/log.js";
import { SVC_ARGV } from "../../helpers/cliEntry.js";
import { webhookConfig } from "../../helpers/gateway.js";
import { type HealthImpostor, healthImpostor } from "../../helpers/healthImpostor.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { onPickedPort } from "../../helpers/http.js";
import { cliConfig, svc } from "./svc.js";

let home: TempHome;
let busy: Server | undefined;
let impostor: HealthImpostor | undefined;
afterEach(async () => {
  busy?.close();
  busy = undefined;
  await impostor?.close();
  impostor = undefined;
  home.cleanup();
});

/**
 * A home with one route, and a port another program holds: a plain TCP server on 127.0.0.1, which takes the
 * connection and never answers GET /health.
 */
async function homeAndBusyPort(): Promise<number> {
  home = tempHome();
  home.write("config.yaml", stringify(cliConfig({ a: { secret: "s" } })));
  const server = createServer();
  busy = server;
  return new Promise<number>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port)),
  );
}

describe("svc gateway run: why it cannot listen, and what to do", { timeout: 90_000 }, () => {
  it("a host that is not an address of this machine is named as the problem (not a busy port)", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig({ a: { secret: "s" } })));
    // 192.0.2.1 is TEST-NET-1 (RFC 5737): never assigned to a real interface.
    const res = await svc(home, ["gateway", "run", "--host", "192.0.2.1", "--port", "0"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("cannot listen on 192.0.2.1:0");
    expect(res.stderr).toContain(
      "192.0.2.1 is not an address of this machine — set platforms.webhook.host (or --host)",
    );
    expect(res.stderr).not.toContain("another gateway");
  });

  it("a busy port on this machine's address written in another form (::ffff:127.0.0.1) is a busy port, not 'not an address of this machine'", async () => {
    const port = await homeAndBusyPort();
    const res = await svc(home, ["gateway", "run", "--host", "::ffff:127.0.0.1", "--port", String(port)]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      `cannot listen on [::ffff:127.0.0.1]:${port} — another program listens on port ${port} (not an svc gateway`,
    );
    expect(res.stderr).not.toContain("not an address of this machine");
  });

  it("a port another program holds (not an svc gateway) names that program, not a gateway", async () => {
    const port = await homeAndBusyPort();
    const res = await svc(home, ["gateway", "run", "--port", String(port)]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      `cannot listen on 127.0.0.1:${port} — another program listens on port ${port} (not an svc gateway: it does not answer GET /health as one does) — find it with ss -ltnp 'sport = :${port}', and stop it or choose another port (platforms.webhook.port, WEBHOOK_PORT or --port)`,
    );
    expect(res.stderr).not.toContain("gateway running");
  });

  it("a port another gateway listens on is refused, not shared (uWS would bind it with SO_REUSEPORT)", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig({ a: { secret: "s" } })));
    const other = tempHome();
    // A configured port, as two gateways meet in practice (the kernel shares no port it picked for 0).
    const [port, first] = await onPickedPort((picked) => {
      other.write("config.yaml", stringify(webhookConfig({ a: { secret: "s" } }, { port: picked })));
      return startGateway({
        home: other.dir,
        env: { PATH: process.env.PATH ?? "" },
        http: "uws",
        logger: createLogger({ file: join(other.dir, "gateway.log"), stdout: false, level: "warn" }),
      });
    });
    try {
      expect(first.port).toBe(port);
      const res = await svc(home, ["gateway", "run", "--port", String(port)], { timeoutMs: 30_000 });
      expect(res.code).toBe(1);
      expect(res.stderr).toContain(
        `cannot listen on 127.0.0.1:${port} — another svc gateway listens on port ${port} (its GET /health answers as one does, naming an instance this SVC_HOME's gateway.json does not record: it serves another SVC_HOME) — stop that one (svc gateway stop, with its SVC_HOME), or choose another port (platforms.webhook.port, WEBHOOK_PORT or --port)`,
      );
    } finally {
      await first.stop();
      other.cleanup();
    }
  });

  it.each([
    ["127.0.0.1", "127.0.0.1"],
    ["every interface (::), asked on ::1 and then 127.0.0.1", "::"],
  ])(
    "a port another program holds that answers GET /health with an svc gateway's body but no Svc-Instance (%s) is not called another svc gateway to stop with svc gateway stop",
    async (_, host) => {
      home = tempHome();
      home.write("config.yaml", stringify(cliConfig({ a: { secret: "s" } })));
      impostor = await healthImpostor();
      const port = impostor.port;
      const res = await svc(home, ["gateway", "run", "--host", host, "--port", String(port)], {
        timeoutMs: 30_000,
      });
      expect(res.code).toBe(1);
      expect(impostor.asked()).toBe(1);
      expect(res.stderr).toContain(
        `cannot listen on ${listenAddress(host, port)} — an svc gateway older than this version, or another program answering as one, listens on port ${port} (its GET /health answers with an svc gateway's body but without the Svc-Instance header this version's gateways name themselves by) — find it with ss -ltnp 'sport = :${port}', and stop it or choose another port (platforms.webhook.port, WEBHOOK_PORT or --port)`,
      );
      expect(res.stderr).not.toContain("svc gateway stop");
    },
  );
});

describe("a gateway of this SVC_HOME seen only by its /health answer", { timeout: 90_000 }, () => {
  it("is named as this SVC_HOME's gateway when its Svc-Instance is the instance gateway.json records, though no process here is it (another PID namespace's)", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig({ a: { secret: "s" } })));
    const there = tempHome();
    const [port, running] = await onPickedPort((picked) => {
      there.write("config.yaml", stringify(webhookConfig({ a: { secret: "s" } }, { port: picked })));
      return startGateway({
        home: there.dir,
        env: { PATH: process.env.PATH ?? "" },
        http: "uws",
        logger: createLogger({ file: join(there.dir, "gateway.log"), stdout: false, level: "warn" }),
      });
    });
    try {
      // Stands for this SVC_HOME's gateway run in a container (pid 4242 there), whose record names it.
      const stateFile = join(home.dir, "gateway.json");
      home.write(
        "gateway.json",
        JSON.stringify({
          pid: 4242,
          host: "127.0.0.1",
          port,
          started_at: new Date().toISOString(),
          pid_namespace: "pid:[4026530000]",
          instance: running.instance,
        }),
      );
      const refused = startGateway({
        home: home.dir,
        env: { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir },
        port,
        logger: createLogger({ file: join(home.dir, "gateway.log"), stdout: false, level: "warn" }),
      });
      await expect(refused).rejects.toThrow(
        `cannot listen on 127.0.0.1:${port} — the gateway of this SVC_HOME (${home.dir}) already listens on port ${port} (its GET /health names the instance ${stateFile} records), as pid 4242 of another PID namespace (pid:[4026530000]), which this process cannot signal — stop it where it runs (svc gateway stop there: docker exec <container> svc gateway stop, or on the host), or choose another port (platforms.webhook.port, WEBHOOK_PORT or --port)`,
      );
    } finally {
      await running.stop();
      there.cleanup();
    }
  });
});

describe("svc gateway run on a port this SVC_HOME's own gateway holds", { timeout: 90_000 }, () => {
  let holder: ChildProcess | undefined;
  afterEach(() => {
    holder?.kill("SIGKILL");
    holder = undefined;
  });

  it("names that gateway and how to stop it; with gateway.pid naming it, the lock refuses before the listener", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig({ a: { secret: "s" } })));
    // Stands for a gateway of this SVC_HOME whose gateway.pid was removed by hand: a process run with a
    // `gateway` argument and this SVC_HOME, listening on the port its gateway.json records.
    const child = spawn(
      process.execPath,
      [
        "-e",
        `const s = require("node:net").createServer(); s.listen(0, "127.0.0.1", () => console.log(s.address().port))`,
        "gateway",
      ],
      {
        env: { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir },
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    holder = child;
    const port = Number(await new Promise<Buffer>((resolve) => child.stdout?.once("data", resolve)));
    const pid = child.pid as number;
    home.write(
      "gateway.json",
      JSON.stringify({ pid, host: "127.0.0.1", port, started_at: new Date().toISOString() }),
    );
    const res = await svc(home, ["gateway", "run", "--port", String(port)], { timeoutMs: 30_000 });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      `cannot listen on 127.0.0.1:${port} — the gateway of this SVC_HOME (${home.dir}, pid ${pid}) already listens on port ${port} — stop it with kill ${pid} (${join(home.dir, "gateway.pid")} does not name it, so svc gateway stop would not find it)`,
    );
    // Once gateway.pid names it, a second gateway of this SVC_HOME is refused before it listens (exit 2).
    home.write("gateway.pid", `${pid}\n`);
    const locked = await svc(home, ["gateway", "run", "--port", String(port)], { timeoutMs: 30_000 });
    expect(locked.code).toBe(2);
    expect(locked.stderr).toContain(
      `a gateway is already running for ${home.dir} (pid ${pid}, ${join(home.dir, "gateway.pid")}) — stop it with svc gateway stop, or use another SVC_HOME`,
    );
  });
});

/** Below this port only root (or CAP_NET_BIND_SERVICE) may listen; containers often lower it to 0. */
const unprivilegedFrom = (() => {
  try {
    return Number(readFileSync("/proc/sys/net/ipv4/ip_unprivileged_port_start", "utf8"));
  } catch {
    return 1024;
  }
})();

/** `svc gateway run` as a user other than root (nobody, when the tests run as root) to its exit. */
function runUnprivileged(home: TempHome, args: readonly string[]) {
  const argv = [process.execPath, ...SVC_ARGV, "gateway", "run", ...args];
  const asRoot = process.getuid?.() === 0;
  if (asRoot) for (const path of [home.dir, join(home.dir, "config.yaml")]) chownSync(path, 65534, 65534);
  const [command, ...rest] = asRoot
    ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", ...argv]
    : argv;
  const child = spawn(command as string, rest, {
    env: { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  // One that listens after all is stopped, and fails the test on its exit code.
  const stopper = setTimeout(() => child.kill("SIGKILL"), 30_000);
  return new Promise<{ code: number | null; stderr: string }>((resolve) =>
    child.on("exit", (code) => {
      clearTimeout(stopper);
      resolve({ code, stderr });
    }),
  );
}

describe.runIf(unprivilegedFrom > 999)(
  "svc gateway run on a port below 1024 as a user other than root",
  {
    timeout: 90_000,
  },
  () => {
    for (const server of ["uws", "node"] as const)
      it(`says that the port needs root or CAP_NET_BIND_SERVICE, not that another gateway holds it (${server})`, async () => {
        home = tempHome();
        const config = cliConfig({ a: { secret: "s" } }) as { platforms: { webhook: object } };
        config.platforms.webhook = { ...config.platforms.webhook, http_server: server };
        home.write("config.yaml", stringify(config), 0o600);
        const res = await runUnprivileged(home, ["--port", "999"]);
        expect(res.code).toBe(1);
        expect(res.stderr).toContain("cannot listen on 127.0.0.1:999");
        expect(res.stderr).toContain(
          "port 999 is below 1024, where only root or a program given CAP_NET_BIND_SERVICE may listen (EACCES) — choose a port from 1024 up (platforms.webhook.port, WEBHOOK_PORT or --port) and forward 999 to it",
        );
        expect(res.stderr).not.toContain("another gateway");
      });
  },
);
