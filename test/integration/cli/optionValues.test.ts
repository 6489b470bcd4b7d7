import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { loadInProcessCli, runEachInProcess } from "../../helpers/inProcessCli.js";
import { cliConfig, svc, svcEach } from "./svc.js";

// The first in-process command of a worker would load the CLI within a test's time; loaded here instead.
beforeAll(() => loadInProcessCli(), 180_000);

let home: TempHome;
beforeAll(() => {
  home = tempHome();
  home.write("config.yaml", stringify(cliConfig()));
});
afterAll(() => home.cleanup());

/**
 * The command lines, one after another in this worker (helpers/inProcessCli.ts), `gateway run|start`
 * included: each is refused while its options are read, before it would start or spawn anything.
 */
const each = <const T extends readonly (readonly string[])[]>(...argsList: T) =>
  runEachInProcess(argsList, { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir });

describe("bad option values are usage errors (exit 2) caught before anything runs", {
  timeout: 90_000,
}, () => {
  it("gateway start --timeout / --port, gateway stop --timeout, webhook test --port", async () => {
    await svc(home, ["webhook", "subscribe", "gh"]);
    const [startTimeout, startPort, stopTimeout, testPort] = await each(
      ["gateway", "start", "--timeout", "soon"],
      ["gateway", "start", "--port", "http"],
      ["gateway", "stop", "--timeout", "-1"],
      ["webhook", "test", "gh", "--port", "abc"],
    );
    expect(startTimeout).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--timeout: expected a number of seconds greater than 0, got "soon"'),
    });
    expect(startPort).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--port: expected a port number (0-65535), got "http"'),
    });
    expect(stopTimeout).toMatchObject({ code: 2, stderr: expect.stringContaining("--timeout") });
    // test sends to a listening gateway: port 0 is no port it can send to, so the range starts at 1.
    expect(testPort).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--port: expected a port number (1-65535), got "abc"'),
    });
    // Nothing was started by the refused `start` commands.
    expect(existsSync(join(home.dir, "gateway.pid"))).toBe(false);
    expect((await svc(home, ["gateway", "status"])).code).toBe(3);
  });

  it("gateway run --inspect, an empty --host, gateway setup --port and an unknown gateway subcommand name the flag or command", async () => {
    const [inspect, inspectZero, setupPort, unknown, runHost, startHost] = await each(
      ["gateway", "run", "--inspect", "abc"],
      ["gateway", "run", "--inspect", "0"],
      ["gateway", "setup", "--non-interactive", "--port", "0"],
      ["gateway", "frob"],
      // An empty host binds every interface while the log names none.
      ["gateway", "run", "--host", "", "--port", "0"],
      ["gateway", "start", "--host", " "],
    );
    for (const empty of [runHost, startHost])
      expect(empty).toMatchObject({
        code: 2,
        stderr: expect.stringContaining("--host: expected an address"),
      });
    expect(inspect).toMatchObject({
      code: 2,
      stderr: 'svc: --inspect: expected a port number (1-65535), got "abc"\n',
    });
    expect(inspectZero).toMatchObject({ code: 2, stderr: expect.stringContaining('got "0"') });
    expect(setupPort).toMatchObject({
      code: 2,
      stderr: 'svc: --port: expected a port number (1-65535), got "0"\n',
    });
    expect(unknown).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("unknown command 'gateway frob'"),
    });
    expect(existsSync(join(home.dir, ".env"))).toBe(false);
    expect(existsSync(join(home.dir, "gateway.pid"))).toBe(false);
  });

  it("svc mcp test <server> --timeout is refused: --timeout bounds the checks of --all only; svc mcp list refuses a bad --timeout it would not use", async () => {
    const own = tempHome();
    try {
      own.write("config.yaml", stringify({ mcp_servers: { nx: { command: "no-such-command-svc-test" } } }));
      const [one, bad, list, infinite] = await svcEach(own, [
        ["mcp", "test", "nx", "--timeout", "5"],
        ["mcp", "test", "nx", "--timeout", "soon"],
        // --no-check (as with a gateway running) checks nothing, and still refuses a bad value.
        ["mcp", "list", "--no-check", "--timeout", "soon"],
        ["mcp", "list", "--timeout", "Infinity"],
      ]);
      expect(infinite).toMatchObject({
        code: 2,
        stdout: "",
        stderr:
          'svc: --timeout: expected a number of seconds greater than 0, got "Infinity" — write a finite number of seconds; one above 2147483 (about 24.8 days, the longest a timer holds) counts as 2147483\n',
      });
      expect(list).toMatchObject({
        code: 2,
        stdout: "",
        stderr: 'svc: --timeout: expected a number of seconds greater than 0, got "soon"\n',
      });
      for (const res of [one, bad])
        expect(res).toMatchObject({
          code: 2,
          stdout: "",
          stderr: expect.stringContaining(
            "svc: --timeout applies to svc mcp test --all (how long each check may take); svc mcp test nx waits as long as the server's connect_timeout allows (mcp_servers.nx.connect_timeout, default 60 s)",
          ),
        });
    } finally {
      own.cleanup();
    }
  });
});
