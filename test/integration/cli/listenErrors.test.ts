import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { startGateway } from "../../../src/gateway/index.js";
import { createLogger } from "../../../src/io/log.js";
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
