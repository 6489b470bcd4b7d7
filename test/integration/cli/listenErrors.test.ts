import { createServer, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
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
});
