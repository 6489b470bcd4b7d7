import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { startCliGateway } from "../../helpers/cliGateway.js";
import { closedPort } from "../../helpers/closedPort.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, connectFailures, svc } from "./svc.js";

/**
 * A remote server's `url` whose host a `${VAR}` of the environment gave: the connect's failure quoted the host
 * (`getaddrinfo ENOTFOUND <host> — the host name <host> is not known (DNS)`, `nothing listens on port N of
 * <host>`) in the gateway's log, the status file and `svc mcp list`, `test` and `call`. It is named as the
 * host of the url as config.yaml writes it.
 */

let home: TempHome;
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  home.cleanup();
});

describe(`svc gateway run: an MCP server's url whose host a $\{VAR} of the environment gave`, {
  timeout: 60_000,
}, () => {
  it("names the host as the host of the url config.yaml writes, never the value", async () => {
    home = tempHome();
    const port = await closedPort();
    const env = { MCPHOST: "secretv-host.invalid", MCPADDR: "127.0.0.1" };
    const servers = {
      dns: { url: `http://$\{MCPHOST}/mcp` },
      refused: { url: `http://$\{MCPADDR}:${port}/mcp` },
    };
    home.write("config.yaml", stringify(cliConfig({}, { mcp_servers: servers })));
    const gateway = await startCliGateway(home, children, env);
    const errors = await connectFailures(home, 2);
    const dnsHost = `<the host of "http://$\{MCPHOST}/mcp" (the value it gives is not shown)>`;
    const refusedHost = `<the host of "http://$\{MCPADDR}:${port}/mcp" (the value it gives is not shown)>`;
    expect(errors).toEqual({
      dns: `mcp_servers.dns: fetch failed: getaddrinfo ENOTFOUND ${dnsHost} — the host name ${dnsHost} is not known (DNS): check the host in mcp_servers.dns.url`,
      refused: `mcp_servers.refused: fetch failed: connect ECONNREFUSED ${refusedHost}:${port} — nothing listens on port ${port} of ${refusedHost}: start the server, or check mcp_servers.refused.url`,
    });
    const list = await svc(home, ["mcp", "list"], { env });
    expect(list.stdout).toContain(`the host name ${dnsHost} is not known (DNS)`);
    const state = await svc(home, ["mcp", "status"], { env });
    const test = await svc(home, ["mcp", "test", "dns"], { env });
    expect(test.stdout + test.stderr).toContain(`getaddrinfo ENOTFOUND ${dnsHost}`);
    const call = await svc(home, ["mcp", "call", "refused", "anything"], { env });
    expect(call.stderr).toContain(`nothing listens on port ${port} of ${refusedHost}`);
    const check = await svc(home, ["config", "check"], { env });
    const seen = [
      gateway.output(),
      readFileSync(join(home.dir, "mcp-cache", "status.json"), "utf8"),
      ...[list, state, test, call, check].flatMap((r) => [r.stdout, r.stderr]),
    ].join("\n");
    expect(seen).not.toMatch(/secretv/i);
    // The gateway listens on 127.0.0.1 too: only the refused url's address is looked for.
    expect(seen).not.toMatch(/127\.0\.0\.1:${port}|port \d+ of 127/);
  });
});
