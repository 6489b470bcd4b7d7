import { type ChildProcess, spawn } from "node:child_process";
import { createServer as createHttpServer, type ServerResponse } from "node:http";
import { type AddressInfo, createServer, type Socket } from "node:net";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { readStatusFile } from "../../../src/io/mcp/statusFile.js";
import { SVC_ARGV } from "../../helpers/cliEntry.js";
import { closedPort } from "../../helpers/closedPort.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { type InProcessResult, runInProcess } from "../../helpers/inProcessCli.js";
import { STDIO_FIXTURE } from "./harness.js";

interface Run {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
}

/** svc's own secret: a stdio server that sees it got it from svc's environment. */
const SECRET_TOKEN = "parent-secret";

/** svc's environment: SECRET_TOKEN is set here so a stdio server that sees it got it from svc's own env. */
const svcEnv = (home: TempHome): Record<string, string> => ({
  PATH: process.env.PATH ?? "",
  HOME: home.dir,
  SVC_HOME: home.dir,
  SECRET_TOKEN,
});

/** Spawns a long-running command (`gateway run`). */
function svc(home: TempHome, args: string[]): Run {
  const child = spawn(process.execPath, [...SVC_ARGV, ...args], {
    env: svcEnv(home),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout?.on("data", (d) => (out += d));
  child.stderr?.on("data", (d) => (err += d));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited: new Promise((r) => child.on("exit", (code) => r(code))),
  };
}

/** Runs a command to its end in this worker (see helpers/inProcessCli.ts). */
function run(home: TempHome, args: string[]): Promise<InProcessResult> {
  return runInProcess(args, svcEnv(home));
}

/** Runs `body` with a temporary home of its own, removed after it. */
async function withHome(body: (own: TempHome) => Promise<void>): Promise<void> {
  const own = tempHome();
  try {
    await body(own);
  } finally {
    own.cleanup();
  }
}

/**
 * `node late-gate.mjs <gate file> <server> [args...]`: runs the server once the gate file exists (until then
 * it answers nothing, so svc's connect waits).
 */
const GATE_SCRIPT = `import { existsSync } from "node:fs";
import { pathToFileURL } from "node:url";
const [gate, server, ...rest] = process.argv.slice(2);
process.argv = [process.argv[0], server, ...rest];
const open = () => (existsSync(gate) ? import(pathToFileURL(server).href) : setTimeout(open, 20));
open();
`;

const fixture = (extra: Record<string, unknown> = {}) => ({
  command: process.execPath,
  args: [STDIO_FIXTURE],
  ...extra,
});

let home: TempHome;
let gateway: Run | undefined;
beforeEach(() => {
  home = tempHome();
});
afterEach(async () => {
  if (gateway && gateway.child.exitCode === null) {
    gateway.child.kill("SIGTERM");
    await gateway.exited;
  }
  gateway = undefined;
  home.cleanup();
});

/**
 * Waits (up to 45 s) until `svc mcp list` shows the running gateway's live status matching every pattern,
 * and returns that `svc mcp list`. Polled with `--no-check`, which shows the same live status once the
 * gateway runs and until then only the configuration: a plain `mcp list` before the gateway has written
 * its pid checks each server by starting it, a server process per poll that the test does not look at.
 */
async function listedLive(patterns: readonly RegExp[]): Promise<InProcessResult> {
  const deadline = Date.now() + 45_000;
  for (;;) {
    const polled = await run(home, ["mcp", "list", "--no-check"]);
    if (patterns.every((p) => p.test(polled.stdout))) {
      const list = await run(home, ["mcp", "list"]);
      // A failed server the gateway retries (its backoff) shows as connecting for that moment: poll again.
      if (patterns.every((p) => p.test(list.stdout)) || Date.now() > deadline) {
        for (const p of patterns) expect(list.stdout).toMatch(p);
        return list;
      }
    }
    if (Date.now() > deadline)
      throw new Error(`gateway never settled: ${polled.stdout}\n${gateway?.stdout()}\n${gateway?.stderr()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

function writeConfig(servers: Record<string, unknown>, into: TempHome = home): void {
  into.write(
    "config.yaml",
    stringify({
      platforms: { webhook: { enabled: true, host: "127.0.0.1", port: 0 } },
      mcp_servers: servers,
    }),
  );
}

describe("svc mcp (subprocess)", () => {
  it("tools shows each registered name beside the server's own; call prints the result", async () => {
    writeConfig({ "fx.1": fixture() });
    const tools = await run(home, ["mcp", "tools", "fx.1"]);
    expect(tools.code).toBe(0);
    expect(tools.stdout).toMatch(/mcp__fx_1__write_note\s+write-note/);
    writeConfig({
      "fx.1": fixture({ tools: { include: ["echo", "write_note"] }, headers: { Authorization: "x" } }),
    });
    const filtered = await run(home, ["mcp", "tools", "fx.1"]);
    expect(filtered.stderr).toContain(
      'warning: mcp_servers.fx.1.tools.include: "write_note" matches no tool of this server — filters use the server\'s own names: did you mean "write-note"?',
    );
    // A key the entry's transport never reads, as svc config check says it.
    expect(filtered.stderr).toContain(
      "warning: mcp_servers.fx.1: headers is not used: it applies to url servers, and this is a command (stdio) server — pass what it needs in env, or remove it",
    );
    writeConfig({ "fx.1": fixture() });
    const call = await run(home, ["mcp", "call", "fx.1", "echo", "--args", '{"text":"from the cli"}']);
    expect(call).toMatchObject({ code: 0, stdout: "from the cli\n" });
    const json = await run(home, ["mcp", "call", "fx.1", "echo", "--json", "--args", '{"text":"raw"}']);
    expect(JSON.parse(json.stdout)).toEqual({ content: [{ type: "text", text: "raw" }] });
    const secret = await run(home, ["mcp", "call", "fx.1", "env", "--args", '{"name":"SECRET_TOKEN"}']);
    expect(secret.stdout).toBe("(unset)\n");
    for (const name of ["mcp__fx_1__echo", "mcp__fx_1__write_note", "write_note"]) {
      const byRegistered = await run(home, ["mcp", "call", "fx.1", name, "--args", '{"text":"by name"}']);
      expect(byRegistered, name).toMatchObject({ code: 0 });
    }
  }, 90_000); // seven CLI processes, each starting the stdio fixture

  it("call exits non-zero on an error result, bad JSON args, an unknown server and a denied approval", async () => {
    writeConfig({ fx: fixture(), u: fixture({ trust: "untrusted" }) });
    const failed = await run(home, ["mcp", "call", "fx", "fail"]);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain("it broke");
    const badJson = await run(home, ["mcp", "call", "fx", "echo", "--args", "{text:"]);
    expect(badJson.code).not.toBe(0);
    expect(badJson.stderr).toMatch(/--args: not valid JSON/);
    // An id past 2^53 would reach the tool as 1234567890123456800: refused before anything starts.
    const inexact = await run(home, ["mcp", "call", "fx", "echo", "--args", '{"text": 1234567890123456789}']);
    expect(inexact.code).toBe(2);
    expect(inexact.stderr).toContain(
      '--args: arguments hold 1234567890123456789, an integer past 2^53 that svc cannot pass exactly; the tool was not run — write it as a string ("1234567890123456789")',
    );
    const unknown = await run(home, ["mcp", "call", "nope", "echo"]);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/no MCP server named "nope"/);
    // stdin is not a terminal: the approval prompt answers no, and the error says how to get a yes.
    const denied = await run(home, ["mcp", "call", "u", "write-note", "--args", '{"text":"x"}']);
    expect(denied.code).toBe(1);
    expect(denied.stderr).toContain(
      'svc: mcp_servers.u: calling "write-note" needs approval (trust: untrusted) and it was denied: stdin is not a terminal, so no one could be asked — run svc mcp call in a terminal and answer y, or set trust: full on mcp_servers.u if its tools may run without asking\n',
    );
  }, 90_000); // four CLI processes, three starting the stdio fixture

  it("call: a server process that exits under a call of a tool without readOnlyHint fails it naming outcome_uncertain (exit 1)", async () => {
    // A hand-written stdio server whose only tool, "die", ends the process instead of answering.
    home.write(
      "die.mjs",
      `import { createInterface } from "node:readline";
const send = (m) => process.stdout.write(JSON.stringify(m) + "\\n");
createInterface({ input: process.stdin }).on("line", (line) => {
  const m = JSON.parse(line);
  if (m.method === "initialize")
    send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "die", version: "1" } } });
  else if (m.method === "tools/list")
    send({ jsonrpc: "2.0", id: m.id, result: { tools: [{ name: "die", inputSchema: { type: "object" } }] } });
  else if (m.method === "tools/call") process.exit(1);
});
`,
    );
    writeConfig({ d: { command: process.execPath, args: [`${home.dir}/die.mjs`] } });
    const lost = await run(home, ["mcp", "call", "d", "die"]);
    expect(lost.code).toBe(1);
    expect(lost.stderr).toMatch(
      /^svc: outcome_uncertain: mcp_servers\.d: the connection was lost while "die" was being called \(the server process exited \(code 1\)[\s\S]*; it may or may not have run — verify its effect before calling it again\n$/,
    );
  });

  it("test connects once and reports the time, era and registered tools; exit 1 when the connect fails", async () => {
    writeConfig({
      fx: fixture({ tools: { include: ["echo", "add"] } }),
      gone: { url: `http://127.0.0.1:${await closedPort()}/mcp`, skip_preflight: true },
    });
    const ok = await run(home, ["mcp", "test", "fx"]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(
      /^Testing fx \(stdio: .*stdio-server\.mjs\)\n {2}connected in \d+ ms \(protocol era: legacy\)\n {2}2 tools registered: mcp__fx__echo, mcp__fx__add\n$/,
    );
    const gone = await run(home, ["mcp", "test", "gone"]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/mcp_servers\.gone: fetch failed: .*ECONNREFUSED/);
  });

  it("test and tools of a server that fails to connect still name its mistaken keys, which often say why", async () => {
    writeConfig({
      gone: {
        url: `http://127.0.0.1:${await closedPort()}/mcp`,
        skip_preflight: true,
        headers: { Authorization: "Bearer $GITHUB_TOKEN" },
      },
    });
    for (const command of ["test", "tools"]) {
      const r = await run(home, ["mcp", command, "gone"]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(
        /^warning: mcp_servers\.gone: headers\.Authorization: a \$ followed by a name is how a shell writes a variable, .*\nsvc: mcp_servers\.gone: fetch failed: .*ECONNREFUSED/s,
      );
    }
  });

  it("list --timeout leaves no TLS handshake running past it: an https url whose server never answers the handshake", async () => {
    const open = new Set<Socket>();
    const hung = createServer((socket) => {
      open.add(socket);
      socket.on("close", () => open.delete(socket));
      socket.resume(); // reads (and drops) the handshake, so the client's close is seen
    });
    await new Promise<void>((resolve) => hung.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = hung.address() as AddressInfo;
      writeConfig({ hung: { url: `https://127.0.0.1:${port}/mcp` } });
      const listed = await run(home, ["mcp", "list", "--timeout", "1"]);
      expect(listed.stdout).toContain("failed: no answer within 1 s (--timeout)");
      // undici's own connect timeout (10 s) kept the command's process running that long.
      await vi.waitFor(() => expect(open.size).toBe(0), { timeout: 3000, interval: 50 });
    } finally {
      for (const socket of open) socket.destroy();
      hung.close();
    }
  });

  // The four tests below each mostly wait out a timeout of their own, with homes of their own (not the shared
  // `home`). They run one after another, their commands in this worker: run at once (it.concurrent), all
  // but one of their commands had to start a process of its own, ~0.8 CPU-s each.
  it("tools names the server in a connect timeout", async () => {
    // Reads stdin and never answers: the handshake times out; it exits when its stdin closes.
    await withHome(async (own) => {
      writeConfig(
        { mute: { command: process.execPath, args: ["-e", "process.stdin.resume()"], connect_timeout: 0.5 } },
        own,
      );
      const r = await run(own, ["mcp", "tools", "mute"]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("mcp_servers.mute: connect timed out after 0.5 s (connect_timeout)");
    });
  });

  it("a server that answers the handshake but never tools/list: list's check says so and names --timeout, test names connect_timeout", async () => {
    // 3 s, not less: the server is a Node process loading the SDK, and under a loaded CI machine its
    // handshake alone can take longer than half a second, which this test is not about.
    const unlisted = join(import.meta.dirname, "../../fixtures/mcp/unlisted-tools-server.mjs");
    // Each command in a home of its own, each waiting out its own 3 s.
    const listHome = tempHome();
    const testHome = tempHome();
    try {
      writeConfig({ stuck: { command: process.execPath, args: [unlisted], connect_timeout: 30 } }, listHome);
      const listing = await run(listHome, ["mcp", "list", "--timeout", "3"]);
      writeConfig({ stuck: { command: process.execPath, args: [unlisted], connect_timeout: 3 } }, testHome);
      const tested = await run(testHome, ["mcp", "test", "stuck"]);
      const why = "the server answered the handshake but not tools/list, the listing of its tools";
      expect(listing.stdout).toContain(
        `failed: no answer within 3 s (--timeout) — ${why} (a fault of the server, or a list slow to build: raise --timeout)`,
      );
      expect(tested.code).toBe(1);
      expect(tested.stderr).toContain(
        `mcp_servers.stuck: connect timed out after 3 s (connect_timeout) — ${why} (a fault of the server, or a list slow to build: raise connect_timeout)`,
      );
    } finally {
      listHome.cleanup();
      testHome.cleanup();
    }
  });

  it("an SSE server that accepts the event stream and never answers: test and call fail naming connect_timeout (exit 1)", async () => {
    // The SDK's SSE transport waited for the stream's `endpoint` event even after svc closed it: the
    // given-up connect never settled, and the command, its stop waiting on it, exited 13 saying nothing
    // (in this worker: never ended).
    const held = new Set<Socket>();
    const silent = createServer((socket) => held.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const own = tempHome();
    try {
      const { port } = silent.address() as AddressInfo;
      writeConfig(
        { quiet: { url: `http://127.0.0.1:${port}/sse`, transport: "sse", connect_timeout: 0.5 } },
        own,
      );
      for (const args of [
        ["mcp", "test", "quiet"],
        ["mcp", "call", "quiet", "echo"],
      ]) {
        const r = await run(own, args);
        expect(r.code, args.join(" ")).toBe(1);
        expect(r.stderr).toContain("mcp_servers.quiet: connect timed out after 0.5 s (connect_timeout)");
      }
    } finally {
      for (const socket of held) socket.destroy();
      silent.close();
      own.cleanup();
    }
  });

  it("an SSE url whose stream opens but never sends the endpoint event: the timeout says so (test, list --timeout)", async () => {
    // A Streamable HTTP server's GET, or a plain event stream at a wrong path: the stream opens, no
    // `endpoint` event ever comes, and a bare "connect timed out" did not say where it stopped. The timeouts
    // leave the command time to open the stream on a busy machine (at 0.5 s, and with four test workers at
    // 2 s, it sometimes had not yet).
    const streams = new Set<ServerResponse>();
    const stream = createHttpServer((_req, res) => {
      streams.add(res);
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(": open\n\n");
    });
    await new Promise<void>((resolve) => stream.listen(0, "127.0.0.1", resolve));
    const listHome = tempHome();
    const testHome = tempHome();
    try {
      const { port } = stream.address() as AddressInfo;
      // Each command in a home of its own, each waiting out its own 5 s.
      writeConfig({ events: { url: `http://127.0.0.1:${port}/sse`, transport: "sse" } }, listHome);
      const listing = await run(listHome, ["mcp", "list", "--timeout", "5"]);
      writeConfig(
        { events: { url: `http://127.0.0.1:${port}/sse`, transport: "sse", connect_timeout: 5 } },
        testHome,
      );
      const noEndpoint =
        "the SSE stream opened but sent no endpoint event: the url may not be a legacy-SSE MCP endpoint (for a Streamable HTTP server set transport: http, else check the url's path)";
      const test = await run(testHome, ["mcp", "test", "events"]);
      expect(test.code).toBe(1);
      expect(test.stderr).toContain(
        `mcp_servers.events: connect timed out after 5 s (connect_timeout) — ${noEndpoint}`,
      );
      expect(listing.stdout).toContain(`failed: no answer within 5 s (--timeout) — ${noEndpoint}`);
    } finally {
      for (const res of streams) res.destroy();
      stream.close();
      listHome.cleanup();
      testHome.cleanup();
    }
  });

  it("list without a gateway shows configured servers and the tool count they would register; reload says no gateway is running", async () => {
    writeConfig({
      fx: fixture({ lazy: true, tools: { include: ["e*"], prompts: true } }),
      off: fixture({ enabled: false }),
    });
    await run(home, ["mcp", "tools", "fx"]);
    const list = await run(home, ["mcp", "list", "--no-check"]);
    expect(list.code).toBe(0);
    // echo, env, list_prompts, get_prompt: the filtered count a gateway shows, not the server's 12 tools.
    expect(list.stdout).toMatch(/fx\s+stdio\s+lazy\s+4\s+yes\s+yes/);
    expect(list.stdout).toMatch(/off\s+stdio\s+skipped\s+0\s+no\s+no\s+enabled: false\n/);
    expect(list.stdout).toContain("no gateway is running");
    const reload = await run(home, ["mcp", "reload"]);
    expect(reload.code).toBe(1);
    expect(reload.stdout).toBe("");
    expect(reload.stderr).toMatch(
      /^svc: no gateway is running \(no live pid in .*gateway\.pid\), so there is nothing to reload/,
    );
  });

  it("reload makes the running gateway reconnect only changed servers; list shows its live status", {
    timeout: 90_000,
  }, async () => {
    writeConfig({ keep: fixture(), change: fixture(), off: fixture() });
    gateway = svc(home, ["gateway", "run", "--port", "0"]);
    // Three stdio servers starting on a machine the whole suite keeps busy: up to 45 s, as below.
    await listedLive(["keep", "change", "off"].map((n) => new RegExp(`${n}\\s+stdio\\s+connected`)));
    writeConfig({
      keep: fixture(),
      change: fixture({ timeout: 42 }),
      off: fixture({ enabled: false }),
      added: fixture(),
    });
    const reload = await run(home, ["mcp", "reload"]);
    expect(reload.code).toBe(0);
    expect(reload.stdout).toMatch(/added: added/);
    expect(reload.stdout).toMatch(/reconnected \(changed\): change\n/);
    expect(reload.stdout).toMatch(/stopped \(disabled\): off\n/);
    expect(reload.stdout).toMatch(/unchanged: keep/);

    // A config.yaml the CLI can read but the gateway refuses: the refusal is the answer, not a timeout.
    home.write(
      "config.yaml",
      stringify({
        platforms: {
          webhook: {
            enabled: true,
            host: "127.0.0.1",
            port: 0,
            routes: { r: { secret: "INSECURE_NO_AUTH", deliver: "telegram" } },
          },
        },
        mcp_servers: { keep: fixture() },
      }),
    );
    const refused = await run(home, ["mcp", "reload", "--wait", "30"]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toMatch(/refused the reload and keeps the running config/);
    expect(refused.stderr).toMatch(
      /platforms\.webhook\.routes\.r\.deliver: telegram needs platforms\.telegram/,
    );

    // One the CLI itself refuses (a value no config takes): caught before any signal, said the same way.
    writeConfig({ keep: fixture({ timeout: "soon" }) });
    const unread = await run(home, ["mcp", "reload", "--wait", "30"]);
    expect(unread.code).toBe(1);
    expect(unread.stderr).toMatch(
      /^svc: nothing was reloaded: the gateway \(pid \d+\) would refuse this config\.yaml and keeps the running config — fix what is named below and run svc mcp reload again:\n.*config\.yaml: mcp_servers\.keep\.timeout: expected seconds, got "soon"/,
    );
  });
});

describe("svc mcp reload of servers that cannot connect", { timeout: 90_000 }, () => {
  it("names a changed or added server whose connect failed, with why, instead of listing it as reconnected", async () => {
    writeConfig({ keep: fixture(), broken: fixture() });
    gateway = svc(home, ["gateway", "run", "--port", "0"]);
    // Two stdio servers starting on a machine the whole suite keeps busy: up to 45 s (a CI run took more than 20).
    await listedLive(["keep", "broken"].map((n) => new RegExp(`${n}\\s+stdio\\s+connected`)));
    writeConfig({
      keep: fixture(),
      broken: { command: "svc-no-such-server-program-q7" },
      fresh: { command: "svc-no-such-server-program-q8" },
    });
    const reload = await run(home, ["mcp", "reload", "--wait", "30"]);
    expect(reload.code).toBe(0);
    expect(reload.stdout).not.toMatch(/reconnected \(changed\)/);
    expect(reload.stdout).not.toMatch(/^ {2}added:/m);
    expect(reload.stdout).toContain(
      "  failed to connect: fresh (added) — mcp_servers.fresh: command not found: svc-no-such-server-program-q8",
    );
    expect(reload.stdout).toContain(
      "  failed to connect: broken (changed) — mcp_servers.broken: command not found: svc-no-such-server-program-q7",
    );
    expect(reload.stdout).toMatch(/unchanged: keep\n$/);
  });

  it("says how the try of an unchanged server that had failed ended, not 'nothing changed'", async () => {
    // late: its program comes from .env, which has no such line yet; gone: a program that is not there.
    // Once it has one, late's server waits at a gate the test opens only after the gateway has reported
    // the reload: no connect with the new .env (a backoff retry that began before the reload, or the
    // reload's own) can end before the reload has looked at late, however slow the machine.
    const gate = join(home.dir, "late-gate-open");
    const gated = home.write("late-gate.mjs", GATE_SCRIPT);
    writeConfig({
      keep: fixture(),
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      late: { command: "${SVC_Q_LATE_SERVER_BIN}", args: [gated, gate, STDIO_FIXTURE] },
      gone: { command: "svc-no-such-server-program-q9" },
    });
    gateway = svc(home, ["gateway", "run", "--port", "0"]);
    // A stdio server starting on a busy machine: up to 45 s, as above.
    await listedLive([/keep\s+stdio\s+connected/, /late\s+stdio\s+failed/]);
    const deadline = Date.now() + 45_000;
    // The fix the docs name: the missing line added to .env, then a reload (config.yaml unchanged).
    home.write(".env", `SVC_Q_LATE_SERVER_BIN=${process.execPath}\n`);
    const reloading = run(home, ["mcp", "reload", "--wait", "30"]);
    while (readStatusFile(join(home.dir, "mcp-cache"))?.lastReload === undefined) {
      if (Date.now() > deadline + 30_000) throw new Error(`no reload reported: ${gateway.stderr()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    home.write("late-gate-open", "");
    const reload = await reloading;
    expect(reload.code).toBe(0);
    expect(reload.stdout).toContain("  retried (was not connected): late\n");
    expect(reload.stdout).toContain(
      "  failed to connect: gone (retried) — mcp_servers.gone: command not found: svc-no-such-server-program-q9",
    );
    expect(reload.stdout).toMatch(/unchanged: keep\n$/);
    expect(reload.stdout).not.toContain("nothing changed");
  });
});

describe("svc mcp list with a gateway running", { timeout: 90_000 }, () => {
  it("shows in DETAIL the collision a server lost to one listed earlier", async () => {
    // `a.b` and `a_b` both register `echo` as mcp__a_b__echo: a.b, listed first, keeps it.
    const echo = fixture({ tools: { include: "echo" } });
    home.write("config.yaml", stringify({ mcp_servers: { "a.b": echo, a_b: echo } }));
    gateway = svc(home, ["gateway", "run", "--port", "0"]);
    // Two stdio servers starting on a busy machine: up to 45 s, as above.
    const list = await listedLive([/a_b\s+stdio\s+connected/, /a\.b\s+stdio\s+connected/]);
    expect(list.stdout).toMatch(/a\.b\s+stdio\s+connected\s+1\s+no\s+yes\n/);
    expect(list.stdout).toMatch(
      /a_b\s+stdio\s+connected\s+0\s+no\s+yes\s+collision: a_b: "echo" registers as mcp__a_b__echo, already taken by server a\.b \(listed earlier in mcp_servers\); skipped\n/,
    );
  });
});
