import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

const config = (host: string) =>
  stringify({
    platforms: { webhook: { enabled: true, host, routes: { pr: { secret: "parity-listen-host-secret" } } } },
  });

/**
 * A `platforms.webhook.host` this machine cannot listen on (an address of another machine, a name that
 * does not resolve): `svc gateway run` refused to start, while `svc config check` printed ok and exited 0.
 */
describe("svc config check and a host the gateway cannot listen on", () => {
  it("an address of another machine is a problem naming the key, with the gateway's hint (exit 1)", async () => {
    home = tempHome();
    // TEST-NET-1 (RFC 5737): documentation only, never an address of this machine.
    home.write("config.yaml", config("192.0.2.77"), 0o600);
    const hint =
      "192.0.2.77 is not an address of this machine — set platforms.webhook.host (or --host) to one of its addresses, 0.0.0.0 or 127.0.0.1";
    const check = await svc(home, ["config", "check"]);
    expect(check.code).toBe(1);
    expect(check.stdout).toContain("1 problem: the gateway would not start");
    expect(check.stderr).toContain(
      `${home.dir}/config.yaml: platforms.webhook.host: cannot listen on 192.0.2.77 (`,
    );
    expect(check.stderr).toContain(hint);
    const run = await svc(home, ["gateway", "run", "--port", "0"], { timeoutMs: 20_000 });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(hint);
  });

  it("a name that resolves to nothing is said so (not 'not an address of this machine'), with the name meant", async () => {
    home = tempHome();
    home.write("config.yaml", config("localhos"), 0o600);
    const check = await svc(home, ["config", "check"]);
    expect(check.code).toBe(1);
    expect(check.stderr).toContain(
      `${home.dir}/config.yaml: platforms.webhook.host: cannot listen on localhos (getaddrinfo ENOTFOUND localhos) — localhos is no name this machine can resolve to an address (ENOTFOUND: neither DNS nor /etc/hosts has it) — did you mean localhost? — set platforms.webhook.host (or --host) to one of this machine's addresses, 0.0.0.0 or 127.0.0.1`,
    );
  });

  it("a loopback host is fine, and with the adapter off the host is not checked", async () => {
    home = tempHome();
    home.write("config.yaml", config("127.0.0.1"), 0o600);
    const ok = await svc(home, ["config", "check"]);
    expect(ok.code).toBe(0);
    home.write(
      "config.yaml",
      stringify({
        platforms: { webhook: { enabled: false, host: "192.0.2.77" } },
        mcp_servers: { tools: { command: "parity-listen-host-server" } },
      }),
      0o600,
    );
    const off = await svc(home, ["config", "check"]);
    expect(off.stderr).not.toContain("cannot listen");
    expect(off.code).toBe(0);
  });

  it("svc gateway run names that host beside the startup rules it breaks, in one pass as config check does", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({
        platforms: {
          webhook: { enabled: true, host: "192.0.2.77", routes: { pr: { secret: "INSECURE_NO_AUTH" } } },
        },
      }),
      0o600,
    );
    const run = await svc(home, ["gateway", "run", "--port", "0"], { timeoutMs: 20_000 });
    expect(run.code).toBe(1);
    // Before, only the rule's line: the host was named by the next start, once the secret was fixed.
    expect(run.stderr).toContain(
      "platforms.webhook.routes.pr.secret: INSECURE_NO_AUTH is only allowed on a loopback bind",
    );
    expect(run.stderr).toContain(
      `${home.dir}/config.yaml: platforms.webhook.host: cannot listen on 192.0.2.77 (`,
    );
    const flag = await svc(home, ["gateway", "run", "--port", "0", "--host", "192.0.2.78"], {
      timeoutMs: 20_000,
    });
    expect(flag.code).toBe(1);
    expect(flag.stderr).toContain("--host: cannot listen on 192.0.2.78 (");
  });
});
