import { spawn } from "node:child_process";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { SimulatedClock } from "xstate";
import { captureLogger } from "../../fakes/logCapture.js";
import { CLI_NODE_ARGS, SVC_ARGV, svcModule } from "../../helpers/cliEntry.js";
import type { TempHome } from "../../helpers/home.js";
import { alive, pidInFile, signalProcess } from "../../helpers/process.js";
import { entry, ownHubs, STDIO_FIXTURE, stdioEntry, text, useHubs } from "./harness.js";

const hubs = useHubs();
const SIGNAL_AT_SPAWN = resolve(import.meta.dirname, "../../fixtures/mcp/signalAtSpawn.mjs");

/**
 * Configures server `l` as a wrapper that never answers the handshake and outlives its stdin; returns
 * the file its pid is written to.
 */
function configureSilentServer(home: TempHome): string {
  const pidFile = join(home.dir, "server.pid");
  const wrapper = join(home.dir, "run.sh");
  writeFileSync(
    wrapper,
    `#!/bin/sh\necho $$ > "${pidFile}"\nexec "${process.execPath}" -e "setInterval(() => {}, 1000)"\n`,
  );
  chmodSync(wrapper, 0o755);
  home.write("config.yaml", `mcp_servers:\n  l:\n    command: ${wrapper}\n`);
  return pidFile;
}
describe("stdio server processes", () => {
  it("a tool result larger than 10 MB (the SDK transport's buffer) arrives whole", async () => {
    const hub = hubs.hub(hubs.home, { b: stdioEntry("legacy", {}, ["--big-tool"]) });
    expect((await hub.settled("b")).state).toBe("connected");
    const result = text(await hub.call("b", "big", { bytes: 12 * 1024 * 1024 }));
    expect(result.length).toBe(12 * 1024 * 1024);
    expect(hub.status()[0]?.state).toBe("connected");
  });

  it("a read-only call whose answer is over svc's 64 MiB limit fails saying so, and is not replayed for the same answer", async () => {
    const recorded = join(hubs.home.dir, "received.txt");
    const hub = hubs.hub(hubs.home, { b: stdioEntry("legacy", {}, ["--big-tool", "--record", recorded]) });
    expect((await hub.settled("b")).state).toBe("connected");
    await expect(hub.call("b", "big", { bytes: 65 * 1024 * 1024 })).rejects.toThrow(
      `mcp_servers.b: "big" failed: the server wrote a message of more than 64 MiB on stdout (svc's limit for one stdio message), so svc closed the connection`,
    );
    const calls = readFileSync(recorded, "utf8")
      .split("\n")
      .filter((method) => method === "tools/call");
    expect(calls).toHaveLength(1);
  }, 60_000);

  // The three tests below run at once, each in a home and with hubs of its own: each waits on its processes
  // (a stop's grace periods, a crash timer, a helper's end), not on the machine.
  it.concurrent("a server started through a wrapper script that outlives its stdin leaves no process behind after stop", async ({
    onTestFinished,
  }) => {
    // A launcher script (`command: ./run.sh`) whose server keeps running after stdin closes: the
    // wrapper gets the signals, the server is its child.
    const own = ownHubs(onTestFinished);
    const wrapper = join(own.home.dir, "run.sh");
    writeFileSync(wrapper, `#!/bin/sh\n"${process.execPath}" "${STDIO_FIXTURE}" legacy --linger-ms 600000\n`);
    chmodSync(wrapper, 0o755);
    const hub = own.hub({ w: entry({ command: wrapper }) });
    expect((await hub.settled("w")).state).toBe("connected");
    const pid = Number(text(await hub.call("w", "pid", {})));
    expect(alive(pid)).toBe(true);
    try {
      await hub.stop();
      await vi.waitFor(() => expect(alive(pid)).toBe(false), { timeout: 10_000, interval: 100 });
    } finally {
      if (alive(pid)) signalProcess(pid, "SIGKILL");
    }
  });

  it.concurrent("a read-only call whose server dies under it twice fails saying how the connection ended", async ({
    onTestFinished,
  }) => {
    const hub = ownHubs(onTestFinished).hub({ c: stdioEntry("legacy", {}, ["--crash-after-ms", "300"]) });
    expect((await hub.settled("c")).state).toBe("connected");
    await expect(hub.call("c", "slow", { ms: 5000 })).rejects.toThrow(
      'mcp_servers.c: "slow" failed: the connection was lost again while it was replayed (the connection closed: the server process exited (code 7) — it wrote nothing on stderr)',
    );
  });

  it.concurrent("a server that dies while a process it started holds its stdout: the exit is seen at once and that process stopped", async ({
    onTestFinished,
  }) => {
    const own = ownHubs(onTestFinished);
    // A launcher that starts a helper in the background (a log tailer, an agent) and then execs the server:
    // the helper inherits stdout, so the pipe stays open after the server dies and only its exit tells.
    const helperPids = join(own.home.dir, "helper.pids");
    const wrapper = join(own.home.dir, "run.sh");
    writeFileSync(
      wrapper,
      `#!/bin/sh\nsleep 600 &\necho $! >> "${helperPids}"\nexec "${process.execPath}" "${STDIO_FIXTURE}" legacy --crash-on-call\n`,
    );
    chmodSync(wrapper, 0o755);
    // Each process dies as the call (then its replay) reaches it: never before, however slow the machine.
    const hub = own.hub({ c: entry({ command: wrapper }) });
    expect((await hub.settled("c")).state).toBe("connected");
    // Read-only, so replayed once on the next process, which dies the same way: the call fails saying how,
    // long before its timeout (300 s).
    await expect(hub.call("c", "slow", { ms: 5000 })).rejects.toThrow(
      'mcp_servers.c: "slow" failed: the connection was lost again while it was replayed (the connection closed: the server process exited (code 7) — it wrote nothing on stderr)',
    );
    // The helpers of the two processes that died (the hub may have started a third meanwhile).
    const helpers = readFileSync(helperPids, "utf8").trim().split("\n").slice(0, 2).map(Number);
    expect(helpers).toHaveLength(2);
    await vi.waitFor(() => expect(helpers.filter(alive)).toEqual([]), { timeout: 10_000, interval: 20 });
  }, 60_000);

  it("a server that crashes leaves no process it started behind (one more at each restart), before any stop", async () => {
    // A helper with stdio of its own (a browser the server drives, a worker), in the server's process group.
    const helperPids = join(hubs.home.dir, "helper.pids");
    const wrapper = join(hubs.home.dir, "run.sh");
    writeFileSync(
      wrapper,
      `#!/bin/sh\nsleep 600 </dev/null >/dev/null 2>&1 &\necho $! >> "${helperPids}"\nexec "${process.execPath}" "${STDIO_FIXTURE}" legacy --crash-after-ms 300\n`,
    );
    chmodSync(wrapper, 0o755);
    const hub = hubs.hub(hubs.home, { c: entry({ command: wrapper }) });
    await vi.waitFor(() => expect(hub.status()[0]?.lastError).toMatch(/exited \(code 7\)/), {
      timeout: 15_000,
      interval: 20,
    });
    const first = Number(readFileSync(helperPids, "utf8").split("\n")[0]);
    await vi.waitFor(() => expect(alive(first)).toBe(false), { timeout: 10_000, interval: 20 });
  }, 20_000);

  it("a server that dies after its handshake: the status says how, without the 'check command and args' hint", async () => {
    const hub = hubs.hub(hubs.home, { c: stdioEntry("legacy", {}, ["--crash-after-ms", "100"]) });
    await vi.waitFor(() => expect(hub.status()[0]?.lastError).toBeDefined(), {
      timeout: 15_000,
      interval: 20,
    });
    expect(hub.status()[0]?.lastError).toBe(
      "the connection closed: the server process exited (code 7) — it wrote nothing on stderr",
    );
  });

  it("a stop while a server is still starting waits for its process to end (no orphan when the gateway exits)", async () => {
    // A server that never answers the handshake (one waiting on a login) and ignores SIGTERM, ending
    // only when its stdin closes: the stop must not return (and the gateway exit) before it is gone.
    const pidFile = join(hubs.home.dir, "server.pid");
    const waits = `require("fs").writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); process.on("SIGTERM", () => {}); process.stdin.on("end", () => setTimeout(() => process.exit(0), 200)); process.stdin.resume()`;
    const hub = hubs.hub(hubs.home, { w: entry({ command: process.execPath, args: ["-e", waits] }) });
    const pid = await pidInFile(pidFile, 15_000);
    try {
      expect(hub.status()[0]?.state).toBe("connecting");
      await hub.stop();
      expect(alive(pid)).toBe(false);
    } finally {
      if (alive(pid)) signalProcess(pid, "SIGKILL");
    }
  });

  it("a server that never answers the handshake: the connect timeout quotes what it wrote on stderr meanwhile", async () => {
    // Like a bridge that prints a login URL and waits for it (mcp-remote does): the reason is on stderr.
    const waits = `process.stderr.write("Please authorize this client by visiting: https://auth.example/x\\n"); process.stdin.resume()`;
    const captured = captureLogger();
    const clock = new SimulatedClock();
    const hub = hubs.hub(
      hubs.home,
      { w: entry({ command: process.execPath, args: ["-e", waits], connect_timeout: 60 }) },
      { clock, logger: captured.logger },
    );
    await vi.waitFor(() => expect(captured.messages().join("\n")).toContain("Please authorize"), {
      timeout: 10_000,
      interval: 20,
    });
    clock.increment(60_000);
    expect(hub.status()[0]).toMatchObject({
      state: "failed",
      lastError:
        "connect timed out after 60 s (connect_timeout) — its stderr so far: Please authorize this client by visiting: https://auth.example/x",
    });
  });

  it("a server waiting at a prompt (no newline after it): the connect timeout quotes the prompt", async () => {
    const waits = `process.stderr.write("starting\\nEnter the one-time code: "); process.stdin.resume()`;
    const captured = captureLogger();
    const clock = new SimulatedClock();
    const hub = hubs.hub(
      hubs.home,
      { w: entry({ command: process.execPath, args: ["-e", waits], connect_timeout: 60 }) },
      { clock, logger: captured.logger },
    );
    await vi.waitFor(() => expect(hub.stderrSoFar("w")).toEqual(["starting", "Enter the one-time code:"]), {
      timeout: 10_000,
      interval: 20,
    });
    clock.increment(60_000);
    expect(hub.status()[0]).toMatchObject({
      state: "failed",
      lastError:
        "connect timed out after 60 s (connect_timeout) — its stderr so far: starting | Enter the one-time code:",
    });
  });

  it("a server that never answers and wrote nothing on stderr: the timeout quotes its stdout lines that were no MCP message", async () => {
    // An HTTP server configured as a stdio one: it says where it listens, on stdout, and waits.
    const listens = `process.stdout.write("MCP server listening on http://localhost:3000/mcp\\n"); process.stdin.resume()`;
    const clock = new SimulatedClock();
    const hub = hubs.hub(
      hubs.home,
      { h: entry({ command: process.execPath, args: ["-e", listens], connect_timeout: 60 }) },
      { clock },
    );
    await vi.waitFor(() => expect(hub.stdoutSoFar("h")).toHaveLength(1), { timeout: 10_000, interval: 20 });
    clock.increment(60_000);
    expect(hub.status()[0]).toMatchObject({
      state: "failed",
      lastError:
        "connect timed out after 60 s (connect_timeout) — it wrote nothing on stderr, and on stdout no MCP message but: MCP server listening on http://localhost:3000/mcp",
    });
  });
});

describe("a server that writes each message as pretty-printed JSON, over several lines", () => {
  it("the connect timeout says so and what the server must write, beside its stderr", async () => {
    // A hand-written server answering with JSON.stringify(message, null, 2) (Python: json.dumps(indent=2)).
    const pretty = `process.stderr.write("ready\\n"); require("readline").createInterface({ input: process.stdin }).on("line", (l) => { const m = JSON.parse(l); if (m.id !== undefined) process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: {}, serverInfo: { name: "p", version: "1" } } }, null, 2) + "\\n"); })`;
    const clock = new SimulatedClock();
    const hub = hubs.hub(
      hubs.home,
      { p: entry({ command: process.execPath, args: ["-e", pretty], connect_timeout: 60 }) },
      { clock },
    );
    await vi.waitFor(() => expect(hub.stdoutSoFar("p")).toHaveLength(5), { timeout: 10_000, interval: 20 });
    clock.increment(60_000);
    expect(hub.status()[0]).toMatchObject({
      state: "failed",
      lastError:
        "connect timed out after 60 s (connect_timeout) — its stderr so far: ready — its stdout held parts of a JSON message written over several lines (pretty-printed), but the stdio transport takes each message as JSON on one line — have the server write its messages without line breaks",
    });
  });
});

describe("a server that writes its messages without a line break after them", () => {
  it("the connect timeout says the answer came without its line break, not that the server did not answer", async () => {
    // A hand-written server writing process.stdout.write(JSON.stringify(message)), no "\n" after it.
    const unended = `require("readline").createInterface({ input: process.stdin }).on("line", (l) => { const m = JSON.parse(l); if (m.id !== undefined) process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: {}, serverInfo: { name: "u", version: "1" } } })); })`;
    const clock = new SimulatedClock();
    const hub = hubs.hub(
      hubs.home,
      { u: entry({ command: process.execPath, args: ["-e", unended], connect_timeout: 60 }) },
      { clock },
    );
    await vi.waitFor(() => expect(hub.stdoutSoFar("u")).toHaveLength(1), { timeout: 10_000, interval: 20 });
    clock.increment(60_000);
    expect(hub.status()[0]).toMatchObject({
      state: "failed",
      lastError:
        'connect timed out after 60 s (connect_timeout) — its stdout holds a message not ended by a line break ({"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":…), but the stdio transport reads a message once its line ends — have the server write a newline after each message',
    });
  });
});

describe("a server that never answers, retried", () => {
  it("the next connect's timeout quotes its own process's stderr, not what the given-up one wrote while it was stopped", async () => {
    // A bridge waiting on a login, which ignores its stdin closing and SIGTERM (SIGKILL ends it 2 s later)
    // and says so on stderr while the retry's process already runs. Once the test has seen all it checks, it
    // makes the file `done`: a process whose stdin closes after that exits, so the hub's stop at the test's
    // end does not wait out both grace periods of the retry's process.
    const done = join(hubs.home.dir, "done");
    const waits = `process.on("SIGTERM", () => process.stderr.write("caught SIGTERM, still waiting\\n")); process.stderr.write("waiting for the device login\\n"); process.stdin.on("end", () => { if (require("node:fs").existsSync(${JSON.stringify(done)})) process.exit(0); }); process.stdin.resume(); setInterval(() => {}, 1000)`;
    const captured = captureLogger();
    const clock = new SimulatedClock();
    const hub = hubs.hub(
      hubs.home,
      { w: entry({ command: process.execPath, args: ["-e", waits], connect_timeout: 60 }) },
      { clock, logger: captured.logger },
    );
    const lines = (text: string) => captured.messages().filter((m) => m === `[mcp:w] ${text}`).length;
    const timedOut =
      "connect timed out after 60 s (connect_timeout) — its stderr so far: waiting for the device login";
    await vi.waitFor(() => expect(lines("waiting for the device login")).toBe(1), {
      timeout: 10_000,
      interval: 20,
    });
    // The stop's graces of a given-up process (its stdin closed, then SIGTERM 2 s later, SIGKILL 2 s after
    // that) run on setTimeout: faked from here, and passed once the retry's process has said it waits.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      clock.increment(60_000);
      expect(hub.status()[0]).toMatchObject({ state: "failed", lastError: timedOut });
      // The retry after 1 s starts a new process; the first one, given up, gets SIGTERM meanwhile.
      clock.increment(1000);
      await vi.waitFor(() => expect(lines("waiting for the device login")).toBe(2), {
        timeout: 10_000,
        interval: 20,
      });
      vi.advanceTimersByTime(2000);
      await vi.waitFor(() => expect(lines("caught SIGTERM, still waiting")).toBe(1), {
        timeout: 10_000,
        interval: 20,
      });
      // Its SIGKILL.
      vi.advanceTimersByTime(2000);
      clock.increment(60_000);
      expect(hub.status()[0]).toMatchObject({ state: "failed", lastError: timedOut });
      // The retry's process, given up too, exits once its stdin is closed after `done` is made; else its
      // graces pass.
      writeFileSync(done, "");
      vi.advanceTimersByTime(4000);
    } finally {
      vi.useRealTimers();
    }
    // The same failure again: logged at DEBUG, not warned about at each retry.
    const failures = captured
      .lines()
      .map((line) => JSON.parse(line) as { level: number; msg: string })
      .filter((l) => l.msg === `[mcp] mcp_servers.w: ${timedOut}`)
      .map((l) => l.level);
    expect(failures).toEqual([40, 20]);
  }, 30_000);
});

describe("a command stopped by Ctrl-C", () => {
  it("a Ctrl-C that comes the instant the server process is spawned still takes the server down", async () => {
    // Before svc listened for the signal before spawning, the default action ended the command between
    // spawn() and its listener, and the server (in its own process group) ran on.
    const cli = spawn(
      process.execPath,
      [...CLI_NODE_ARGS, SIGNAL_AT_SPAWN, svcModule("io/mcp/stdioTransport.js")],
      {
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    const exited = new Promise((resolve) => cli.once("exit", (code, signal) => resolve(signal ?? code)));
    const pid = await new Promise<number>((resolve) =>
      cli.stdout.once("data", (chunk: Buffer) => resolve(Number(chunk.toString().trim()))),
    );
    expect(pid).toBeGreaterThan(0);
    try {
      expect(await exited).toBe("SIGINT");
      await vi.waitFor(() => expect(alive(pid)).toBe(false), { timeout: 10_000, interval: 50 });
    } finally {
      if (alive(pid)) signalProcess(pid, "SIGKILL");
    }
  });

  /** Starts `svc <args>` in `home`; resolves with the signal (or code) it ended with. */
  const start = (home: typeof hubs.home, args: string[]) => {
    const cli = spawn(process.execPath, [...SVC_ARGV, ...args], {
      env: { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir },
      stdio: ["ignore", "ignore", "ignore"],
    });
    const exited = new Promise((resolve) => cli.once("exit", (code, signal) => resolve(signal ?? code)));
    return { cli, exited };
  };

  // SIGHUP: the terminal closed (an ssh session dropped) under the call, which the server must not run on for.
  it.each(["SIGINT", "SIGTERM", "SIGHUP"] as const)(
    "svc mcp call cancels the call (notifications/cancelled), stops its server and ends by the signal (%s)",
    async (signal) => {
      const home = hubs.home;
      const recorded = join(home.dir, "received.txt");
      home.write(
        "config.yaml",
        `mcp_servers:\n  l:\n    command: ${process.execPath}\n    args: ["${STDIO_FIXTURE}", legacy, --record, "${recorded}"]\n`,
      );
      const { cli, exited } = start(home, ["mcp", "call", "l", "slow", "--args", '{"ms":60000}']);
      const received = () => (existsSync(recorded) ? readFileSync(recorded, "utf8").trim().split("\n") : []);
      // Up to 30 s: a CLI process and its server starting on a machine the whole suite keeps busy (10 s ran
      // out there, the handshake and tools/list already done).
      await vi.waitFor(() => expect(received()).toContain("tools/call"), { timeout: 30_000, interval: 50 });
      cli.kill(signal);
      expect(await exited).toBe(signal);
      expect(received().at(-1)).toBe("notifications/cancelled");
    },
    60_000,
  );

  it.each([
    [
      "svc mcp call interrupted while its server is still starting leaves no process behind",
      ["mcp", "call", "l", "t"],
    ],
    [
      "a command without a handler (svc mcp test waiting on a handshake) takes its stdio server down with it",
      ["mcp", "test", "l"],
    ],
  ])("%s", async (_name, args) => {
    const home = hubs.home;
    const pidFile = configureSilentServer(home);
    const { cli, exited } = start(home, args);
    const pid = await pidInFile(pidFile);
    try {
      cli.kill("SIGINT");
      expect(await exited).toBe("SIGINT");
      await vi.waitFor(() => expect(alive(pid)).toBe(false), { timeout: 10_000, interval: 50 });
    } finally {
      if (alive(pid)) signalProcess(pid, "SIGKILL");
    }
  });
});
