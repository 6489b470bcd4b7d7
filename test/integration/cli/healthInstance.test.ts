import { readFileSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { pidNamespace } from "../../../src/io/pidNamespace.js";
import { type HealthImpostor, healthImpostor } from "../../helpers/healthImpostor.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, type Foreground, killIfRunning, runForeground, svc } from "./svc.js";

/**
 * `svc gateway status|start|stop` (and the commands that look for the running gateway) ask `/health` at the
 * address gateway.json records, and took any 200 there for the gateway gateway.pid names. Once that gateway
 * was gone (a container's gateway killed) and another program, or another SVC_HOME's gateway, listened on
 * its address, `status` said "running … Health: ok" for a gateway that was gone and `start`/`run` were
 * refused for it. Each gateway now names itself in its /health answers (`Svc-Instance`, the id it records in
 * gateway.json as `instance`), and an answer without that id is not taken for it.
 */

const BODY = '{"status":"ok","platform":"webhook"}';
const ELSEWHERE = "pid:[4026530000]";

let home: TempHome | undefined;
let impostor: HealthImpostor | undefined;
let gateway: Foreground | undefined;
afterEach(async () => {
  await killIfRunning(gateway);
  gateway = undefined;
  await impostor?.close();
  impostor = undefined;
  home?.cleanup();
  home = undefined;
});

/** `method /health` on a connection of its own: status, body and the Svc-Instance header. */
function askHealth(port: number, method = "GET") {
  return new Promise<{ status: number; body: string; instance: unknown }>((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path: "/health", method, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => (body += chunk));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, body, instance: res.headers["svc-instance"] }),
      );
    });
    req.on("error", reject);
    req.end();
  });
}

/** gateway.pid and gateway.json as pid 4242 of another PID namespace left them, recording `port`. */
function leftElsewhere(dir: string, port: number, instance?: string): { pidFile: string; stateFile: string } {
  const pidFile = join(dir, "gateway.pid");
  const stateFile = join(dir, "gateway.json");
  writeFileSync(pidFile, "4242\n");
  writeFileSync(
    stateFile,
    JSON.stringify({
      pid: 4242,
      host: "127.0.0.1",
      port,
      started_at: new Date().toISOString(),
      pid_namespace: ELSEWHERE,
      state_backend: "local",
      ...(instance === undefined ? {} : { instance }),
    }),
  );
  return { pidFile, stateFile };
}

describe("a gateway's /health names its instance", { timeout: 90_000 }, () => {
  it.each([
    ["uWS on the main thread", {}],
    ["uWS on 2 ingress threads", { workers: 2 }],
    ["node:http", { http_server: "node" }],
  ])(
    "%s: every /health 200 carries the Svc-Instance gateway.json records, its body unchanged",
    async (_, settings) => {
      home = tempHome();
      const config = cliConfig({ a: { secret: "s" } }) as { platforms: { webhook: object } };
      config.platforms.webhook = { ...config.platforms.webhook, ...settings };
      home.write("config.yaml", stringify(config), 0o600);
      gateway = await runForeground(home);
      const recorded = JSON.parse(readFileSync(join(home.dir, "gateway.json"), "utf8")) as {
        instance?: unknown;
      };
      expect(recorded.instance).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      // A connection each: the kernel spreads them over the ingress threads.
      const answers = await Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          askHealth((gateway as Foreground).port, i % 4 === 3 ? "HEAD" : "GET"),
        ),
      );
      for (const [i, answer] of answers.entries())
        expect(answer).toEqual({ status: 200, body: i % 4 === 3 ? "" : BODY, instance: recorded.instance });
      const status = await svc(home, ["gateway", "status"]);
      expect(status.code, status.stdout).toBe(0);
      expect(status.stdout).toContain("\nHealth: ok\n");
    },
  );
});

describe.runIf(pidNamespace() !== undefined)(
  "svc gateway status|stop beside a gateway.pid of another PID namespace",
  { timeout: 90_000 },
  () => {
    it("whose recorded address another program answers /health at (200, without the recorded instance) do not take that answer for the gateway", async () => {
      home = tempHome();
      home.write("config.yaml", stringify(cliConfig({ a: { secret: "s" } })), 0o600);
      impostor = await healthImpostor();
      const { pidFile, stateFile } = leftElsewhere(home.dir, impostor.port, "the-gone-gateways-id");
      const address = `127.0.0.1:${impostor.port}`;

      const status = await svc(home, ["gateway", "status"]);
      expect(status.code, status.stdout).toBe(4);
      expect(status.stdout).toMatch(/^Gateway: unknown — .* names pid 4242 of another PID namespace /);
      expect(status.stdout).toContain(
        `\nHealth: another program (or another gateway) answers at ${address}, not the gateway ${stateFile} names (its answer lacks the instance id recorded there): that gateway no longer listens there, or this command does not reach its address\n`,
      );
      expect(impostor.asked()).toBe(1);

      const stop = await svc(home, ["gateway", "stop"]);
      expect(stop.code, stop.stderr).toBe(2);
      expect(stop.stderr).toContain(
        `which this command cannot signal, and what answers /health at ${address}, where ${stateFile} says it listens, is not that gateway (another program, or another gateway: its answer lacks the instance id recorded there) — most likely the gateway that wrote it is gone`,
      );
      // Kept: whether that gateway runs cannot be told from here.
      expect(readFileSync(pidFile, "utf8")).toBe("4242\n");
      expect(JSON.parse(readFileSync(stateFile, "utf8"))).toMatchObject({ pid: 4242, port: impostor.port });
    });

    it("written by an older svc (no instance recorded) takes any 200 there for its gateway, as before", async () => {
      home = tempHome();
      home.write("config.yaml", stringify(cliConfig({ a: { secret: "s" } })), 0o600);
      impostor = await healthImpostor();
      leftElsewhere(home.dir, impostor.port);
      const status = await svc(home, ["gateway", "status"]);
      expect(status.code, status.stdout).toBe(0);
      expect(status.stdout).toBe(
        `Gateway: running (pid 4242 of another PID namespace, ${ELSEWHERE}, which this command cannot check: its /health answers)\nListening: 127.0.0.1:${impostor.port}\nHealth: ok\n`,
      );
    });
  },
);

describe("svc gateway status of a running gateway of this PID namespace", { timeout: 90_000 }, () => {
  it("whose recorded address another program answers says so, not Health: ok", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig({ a: { secret: "s" } })), 0o600);
    gateway = await runForeground(home);
    impostor = await healthImpostor();
    const stateFile = join(home.dir, "gateway.json");
    // Its record names it (its pid and instance) at an address where the other program answers.
    const recorded = JSON.parse(readFileSync(stateFile, "utf8")) as Record<string, unknown>;
    writeFileSync(stateFile, JSON.stringify({ ...recorded, port: impostor.port }));
    const status = await svc(home, ["gateway", "status"]);
    expect(status.code, status.stdout).toBe(1);
    expect(status.stdout).toBe(
      `Gateway: running (pid ${gateway.child.pid})\nListening: 127.0.0.1:${impostor.port}\nHealth: not answering — another program (or another gateway) answers at 127.0.0.1:${impostor.port}, not this gateway (its answer lacks the instance id ${stateFile} records): find what listens there with ss -ltnp 'sport = :${impostor.port}'\n`,
    );
    expect(impostor.asked()).toBe(1);
  });
});
