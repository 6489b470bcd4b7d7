import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "../cli/svc.js";

/**
 * Two servers whose names read the same once sanitized (`a.b`, `a_b`: both register `mcp__a_b__<tool>`)
 * written into config.yaml by hand: the one listed first keeps every tool name both list. `svc mcp add`,
 * `import` and `install` say so when they write such a name; the gateway's start, a reload and
 * `svc config check` say so of the file as it is, before any server has connected.
 */

// Nothing listens on port 9 of the loopback: the servers' connects fail at once, and take no name.
const SERVERS = {
  "a.b": { url: "http://127.0.0.1:9/mcp" },
  "a-c": { url: "http://127.0.0.1:9/mcp" },
  a_b: { url: "http://127.0.0.1:9/mcp" },
};
const WARNING =
  "mcp_servers.a_b: a_b registers its tools as mcp__a_b__<tool>, as a.b does: a tool name both list is registered for a.b only (listed first in mcp_servers), the other's is skipped — give one of them another name to keep both servers' tools";

let gw: TestGateway | undefined;
let home: TempHome | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
  home?.cleanup();
  home = undefined;
});

describe("servers of config.yaml whose names register their tools under one prefix", {
  timeout: 60_000,
}, () => {
  it("the gateway's start warns, naming the server listed later and the one that keeps the names", async () => {
    gw = await startTestGateway({ config: webhookConfig({}, {}, { mcp_servers: SERVERS }) });
    const file = join(gw.home.dir, "config.yaml");
    const warned = gw.logs().filter((l) => l.level === 40 && l.msg.includes("registers its tools as"));
    expect(warned.map((l) => l.msg)).toEqual([`[mcp] ${file}: ${WARNING}`]);
  });

  it("a reload warns of a name written since, and a server with enabled: false shares no prefix", async () => {
    const apart = { "a.b": SERVERS["a.b"], "a-c": SERVERS["a-c"] };
    gw = await startTestGateway({ config: webhookConfig({}, {}, { mcp_servers: apart }) });
    const running = gw;
    expect(running.logs().some((l) => l.msg.includes("registers its tools as"))).toBe(false);
    running.home.write("config.yaml", stringify(webhookConfig({}, {}, { mcp_servers: SERVERS })), 0o600);
    running.gateway.reload();
    const file = join(running.home.dir, "config.yaml");
    expect(running.logs().map((l) => l.msg)).toContain(`[mcp] ${file}: ${WARNING}`);
    const disabled = { ...SERVERS, "a.b": { ...SERVERS["a.b"], enabled: false } };
    running.home.write("config.yaml", stringify(webhookConfig({}, {}, { mcp_servers: disabled })), 0o600);
    const before = running.logs().length;
    running.gateway.reload();
    expect(
      running
        .logs()
        .slice(before)
        .some((l) => l.msg.includes("registers its tools as")),
    ).toBe(false);
  });

  it("svc config check warns the same, and still passes", async () => {
    home = tempHome();
    home.write("config.yaml", stringify({ mcp_servers: SERVERS }), 0o600);
    const res = await svc(home, ["config", "check"]);
    expect(res.code).toBe(0);
    expect(res.stderr).toContain(`Warning: ${join(home.dir, "config.yaml")}: ${WARNING}\n`);
    expect(res.stderr).not.toContain("mcp_servers.a-c:");
  });
});
