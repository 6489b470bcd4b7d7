import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { runInProcess } from "../../helpers/inProcessCli.js";
import { STDIO_FIXTURE } from "../mcp/harness.js";
import { svc } from "./svc.js";

/** The fixture bundled (helpers/bundledFixture.ts): the same server, started in ~0.4 CPU-s instead of ~0.6. */
const NAMED = await bundledFixture(join(import.meta.dirname, "../../fixtures/mcp/named-tools-server.mjs"));

let home: TempHome;
beforeEach(() => {
  home = tempHome();
  // `a.b` and `a_b` both register as mcp__a_b__*: the server listed first keeps a name both list.
  const server = { command: process.execPath, args: [STDIO_FIXTURE, "legacy"], tools: { include: "echo" } };
  home.write("config.yaml", stringify({ mcp_servers: { "a.b": server, a_b: server } }));
});
afterEach(() => home.cleanup());

/** `svc mcp call` run in this worker (test/helpers/inProcessCli.ts): what it writes and its exit code. */
const call = (args: string[]) =>
  runInProcess(["mcp", "call", ...args], {
    PATH: process.env.PATH ?? "",
    HOME: home.dir,
    SVC_HOME: home.dir,
  });

const COLLISION =
  'collision: a_b: "echo" registers as mcp__a_b__echo, already taken by server a.b (listed earlier in mcp_servers); skipped';

describe("svc mcp test|tools show what the gateway registers next to a server listed earlier", () => {
  it("before the earlier server ever connected: a note that it takes the names both list", async () => {
    const test = await svc(home, ["mcp", "test", "a_b"]);
    expect(test.code).toBe(0);
    expect(test.stdout).toContain("1 tool registered: mcp__a_b__echo");
    expect(test.stderr).toContain(
      "note: server a.b, listed before a_b in mcp_servers, registers under the same prefix mcp__a_b__ and takes any name both list; its tools are not known here (svc mcp test a.b lists them)",
    );
  });

  it("once it has: the collision, and the tool left out of what is registered", async () => {
    expect((await svc(home, ["mcp", "test", "a.b"])).stdout).toContain("1 tool registered: mcp__a_b__echo");
    const test = await svc(home, ["mcp", "test", "a_b"]);
    // The server lists a tool: the reason is the earlier server, not "none listed".
    expect(test.stdout).toContain(
      "0 tools registered (the one tool it lists registers under a name a server listed earlier in mcp_servers takes: see the collision line)",
    );
    expect(test.stderr).toContain(COLLISION);
    const tools = await svc(home, ["mcp", "tools", "a_b", "--json"]);
    expect(JSON.parse(tools.stdout)).toEqual([]);
    expect(tools.stderr).toContain(COLLISION);
  });

  it("svc mcp call refuses the tool the gateway does not register, by its own name and by the registered name", async () => {
    expect((await svc(home, ["mcp", "test", "a.b"])).code).toBe(0);
    // mcp__a_b__echo is a.b's echo in the gateway: a_b's echo is never run under it, nor by its own name.
    for (const name of ["echo", "mcp__a_b__echo"]) {
      const refused = await call(["a_b", name, "--args", '{"text":"hi"}']);
      expect(refused.code).toBe(1);
      expect(refused.stdout).toBe("");
      expect(refused.stderr).toContain(
        `svc: mcp_servers.a_b: no tool "${name}" is registered — it lost a name collision: "echo" registers as mcp__a_b__echo, already taken by server a.b (listed earlier in mcp_servers); skipped`,
      );
    }
    // The server listed first runs it.
    expect((await call(["a.b", "mcp__a_b__echo", "--args", '{"text":"hi"}'])).stdout).toBe("hi\n");
  });
});

describe("servers of different prefixes whose registered names still meet", () => {
  // `q_` + `t` and `q` + `_t` both register as mcp__q___t: the prefixes differ, the names do not.
  beforeEach(() => {
    home.write(
      "config.yaml",
      stringify({
        mcp_servers: {
          q_: { command: process.execPath, args: [NAMED, "t"] },
          q: { command: process.execPath, args: [NAMED, "_t", "u"] },
        },
      }),
    );
  });

  it("svc mcp test names the collision once the earlier server is known, a note before", async () => {
    const before = await svc(home, ["mcp", "test", "q"]);
    expect(before.stdout).toContain("2 tools registered: mcp__q___t, mcp__q__u");
    expect(before.stderr).toContain(
      "note: server q_, listed before q in mcp_servers, registers names starting mcp__q___, as mcp__q___t of q does, and takes any name both list; its tools are not known here (svc mcp test q_ lists them)",
    );
    expect((await svc(home, ["mcp", "test", "q_"])).stdout).toContain("1 tool registered: mcp__q___t");
    const test = await svc(home, ["mcp", "test", "q"]);
    expect(test.stdout).toContain("1 tool registered: mcp__q__u");
    expect(test.stderr).toContain(
      'collision: q: "_t" registers as mcp__q___t, already taken by server q_ (listed earlier in mcp_servers); skipped',
    );
  });
});

describe("svc mcp list and svc mcp test --all count what the gateway registers", () => {
  it("a server's names taken by one listed earlier are not counted", async () => {
    home.write(
      "config.yaml",
      stringify({
        mcp_servers: {
          "a.b": { command: process.execPath, args: [NAMED, "x", "y"] },
          a_b: { command: process.execPath, args: [NAMED, "x", "y", "z"] },
          q_: { command: process.execPath, args: [NAMED, "t"] },
          q: { command: process.execPath, args: [NAMED, "_t", "u"] },
        },
      }),
    );
    for (const args of [
      ["mcp", "list"],
      ["mcp", "test", "--all"],
    ]) {
      const res = await svc(home, args);
      expect(res.stdout).toMatch(/^a\.b\s+stdio\s+ok \(2 tools\)$/m);
      expect(res.stdout).toMatch(/^a_b\s+stdio\s+ok \(1 tool\)$/m);
      expect(res.stdout).toMatch(/^q_\s+stdio\s+ok \(1 tool\)$/m);
      expect(res.stdout).toMatch(/^q\s+stdio\s+ok \(1 tool\)$/m);
    }
    expect((await svc(home, ["mcp", "test", "a_b"])).stdout).toContain("1 tool registered: mcp__a_b__z");
  });
});
