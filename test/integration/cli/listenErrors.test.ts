import { spawn } from "node:child_process";
import { chownSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { startGateway } from "../../../src/gateway/index.js";
import { createLogger } from "../../../src/io/log.js";
import { SVC_ARGV } from "../../helpers/cliEntry.js";
import { webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { freePort } from "../../helpers/http.js";
import { cliConfig, svc } from "./svc.js";

let home: TempHome;
let busy: Server | undefined;
afterEach(() => {
  busy?.close();
  busy = undefined;
  home.cleanup();
});

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

  it("a busy port says so and how to choose another", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig({ a: { secret: "s" } })));
    const server = createServer();
    busy = server;
    const port = await new Promise<number>((resolve) =>
      server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port)),
    );
    const res = await svc(home, ["gateway", "run", "--port", String(port)]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`cannot listen on 127.0.0.1:${port}`);
    expect(res.stderr).toContain("is another gateway running? Stop it, or choose another port");
  });

  it("a port another gateway listens on is refused, not shared (uWS would bind it with SO_REUSEPORT)", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig({ a: { secret: "s" } })));
    const other = tempHome();
    // A configured port, as two gateways meet in practice (the kernel shares no port it picked for 0).
    const port = await freePort();
    other.write("config.yaml", stringify(webhookConfig({ a: { secret: "s" } }, { port })));
    const first = await startGateway({
      home: other.dir,
      env: { PATH: process.env.PATH ?? "" },
      http: "uws",
      logger: createLogger({ file: join(other.dir, "gateway.log"), stdout: false, level: "warn" }),
    });
    try {
      expect(first.port).toBe(port);
      const res = await svc(home, ["gateway", "run", "--port", String(port)], { timeoutMs: 30_000 });
      expect(res.code).toBe(1);
      expect(res.stderr).toContain(`cannot listen on 127.0.0.1:${port}`);
      expect(res.stderr).toContain("is another gateway running?");
    } finally {
      await first.stop();
      other.cleanup();
    }
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
