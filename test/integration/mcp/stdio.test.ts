import { execFileSync } from "node:child_process";
import { dirname, join, resolve } from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it, vi } from "vitest";
import { type ApprovalSurface, policyApprovals } from "../../../src/actors/mcp/approvals.js";
import type { McpHub } from "../../../src/actors/mcp/hub.js";
import { silentLogger } from "../../../src/io/log.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { entry, STDIO_FIXTURE, stdioEntry, text, useHubs } from "./harness.js";

const PAGED_SERVER = await bundledFixture(resolve(import.meta.dirname, "paged-server.mjs"));
const ctx = useHubs();
const hub = ctx.hub;

describe("stdio servers (real subprocess)", () => {
  it("connects, registers mcp__<server>__<tool> with sanitized names, and calls a tool", async () => {
    const h = hub(ctx.home, { "fx.one": stdioEntry() });
    expect((await h.settled("fx.one")).state).toBe("connected");
    const names = h.tools().map((t) => [t.name, t.original]);
    expect(names).toContainEqual(["mcp__fx_one__write_note", "write-note"]);
    expect(names).toContainEqual(["mcp__fx_one__snake_ro", "snake.ro"]);
    expect(text(await h.call("fx.one", "echo", { text: "hi" }))).toBe("hi");
    expect(text(await h.callRegistered("mcp__fx_one__add", { a: 2, b: 3 }))).toBe("5");
  });

  it("a command that does not exist, is not executable, is a whole command line or an unset variable, fails naming it and the fix", async () => {
    const script = ctx.home.write("server.sh", "#!/bin/sh\n", 0o644);
    const h = hub(ctx.home, {
      missing: entry({ command: "no-such-mcp-server-xyz" }),
      noexec: entry({ command: script }),
      // A whole command line in `command`, as some clients' configs and install links write it.
      line: entry({ command: `${process.execPath} ${STDIO_FIXTURE} legacy` }),
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      unset: entry({ command: "${SERVER_BIN}" }),
    });
    expect((await h.settled("unset")).lastError).toBe(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      "mcp_servers.unset: command not found: ${SERVER_BIN} — ${SERVER_BIN} is not set, so command was run as written — add SERVER_BIN=... to the profile's .env or the environment",
    );
    expect((await h.settled("missing")).lastError).toBe(
      "mcp_servers.missing: command not found: no-such-mcp-server-xyz — check command (and PATH)",
    );
    expect((await h.settled("line")).lastError).toBe(
      `mcp_servers.line: command not found: ${process.execPath} ${STDIO_FIXTURE} legacy — command is the program alone: write command: ${process.execPath} and args: [${STDIO_FIXTURE}, legacy]`,
    );
    expect((await h.settled("noexec")).lastError).toBe(
      `mcp_servers.noexec: command is not an executable file: ${script} — make it executable (chmod +x) or set command to its interpreter and args to the script`,
    );
  });

  it("a command the entry's env.PATH leaves out names that PATH (which replaces the gateway's) and the fix", async () => {
    // Where a shell finds node on the gateway's own PATH, found independently of svc's lookup.
    const node = execFileSync("sh", ["-c", "command -v node"], { encoding: "utf8" }).trim();
    const h = hub(ctx.home, {
      // The server's own directories written as its PATH, without the gateway's: node is not among them.
      custom: entry({ command: "node", args: [STDIO_FIXTURE], env: { PATH: "/opt/svc-test-no-such-bin" } }),
      nowhere: entry({ command: "no-such-mcp-server-xyz", env: { PATH: "/opt/svc-test-no-such-bin" } }),
    });
    expect((await h.settled("custom")).lastError).toBe(
      `mcp_servers.custom: command not found: node — it was looked up in the entry's env.PATH (/opt/svc-test-no-such-bin), which replaces the gateway's PATH for the server process, and the gateway's PATH has it as ${node}: add ${dirname(node)} to env.PATH (PATH: "/opt/svc-test-no-such-bin:\${PATH}" keeps the gateway's directories), or write command: ${node}`,
    );
    expect((await h.settled("nowhere")).lastError).toBe(
      "mcp_servers.nowhere: command not found: no-such-mcp-server-xyz — it was looked up in the entry's env.PATH (/opt/svc-test-no-such-bin), which replaces the gateway's PATH for the server process — check command and env.PATH",
    );
    // The fix it names works: the gateway's directories kept after the entry's own.
    const fixed = hub(ctx.home, {
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      custom: entry({
        command: "node",
        args: [STDIO_FIXTURE],
        env: { PATH: "/opt/svc-test-no-such-bin:${PATH}" },
      }),
    });
    expect((await fixed.settled("custom")).state).toBe("connected");
  });

  it("a script that is there but whose #! interpreter is not (another machine's path, a CRLF first line) says so, not 'command not found'", async () => {
    const moved = ctx.home.write("moved.sh", "#!/opt/svc-test-no-such/python3 -u\nprint(1)\n", 0o755);
    // Saved with Windows line endings: the system looks for an interpreter named "/bin/sh\r".
    const crlf = ctx.home.write("crlf.sh", "#!/bin/sh\r\nexec true\r\n", 0o755);
    const h = hub(ctx.home, {
      moved: entry({ command: moved }),
      crlf: entry({ command: crlf }),
      // Found on the entry's own PATH: the same reason, not the PATH.
      onpath: entry({ command: "moved.sh", env: { PATH: dirname(moved) } }),
    });
    const interpreter = `${moved} exists, but the interpreter its #! line names, /opt/svc-test-no-such/python3, is not on this machine — install it, or correct the #! line (#!/usr/bin/env <name> finds it on PATH)`;
    expect((await h.settled("moved")).lastError).toBe(
      `mcp_servers.moved: command could not be started: ${moved} — ${interpreter}`,
    );
    expect((await h.settled("onpath")).lastError).toBe(
      `mcp_servers.onpath: command could not be started: moved.sh — ${interpreter}`,
    );
    expect((await h.settled("crlf")).lastError).toBe(
      `mcp_servers.crlf: command could not be started: ${crlf} — ${crlf} exists, but its first line ends with a carriage return (the file was saved with Windows line endings), so the system looks for an interpreter named "/bin/sh\\r" — save it with Unix line endings (dos2unix ${crlf})`,
    );
  });

  it("a #!/usr/bin/env script saved with Windows line endings (env exits 127 finding no 'node\\r') is named with the fix", async () => {
    const script = ctx.home.write("server.js", "#!/usr/bin/env node\r\nconsole.log(1)\r\n", 0o755);
    const h = hub(ctx.home, { crlf: entry({ command: script }) });
    const { lastError } = await h.settled("crlf");
    // The exit and env's own stderr lines as before (their quoting is env's), then why the name ends in a CR.
    expect(lastError).toMatch(
      /^mcp_servers\.crlf: the server process exited \(code 127\) before the MCP handshake finished — its stderr: /,
    );
    expect(lastError).toContain(
      ` — ${script}'s first line ends with a carriage return (the file was saved with Windows line endings), so its interpreter's name ends with one too: save it with Unix line endings (dos2unix ${script})`,
    );
  });

  it("a server that writes a banner and log lines on stdout still connects and answers calls", async () => {
    const h = hub(ctx.home, { noisy: stdioEntry("legacy", {}, ["--noisy"]) });
    expect((await h.settled("noisy")).state).toBe("connected");
    for (let i = 0; i < 5; i++)
      expect(text(await h.call("noisy", "echo", { text: `hi ${i}` }))).toBe(`hi ${i}`);
    expect(h.status()[0]?.state).toBe("connected");
  });

  it("a banner written without a line break does not hide the handshake's answer sharing its line: the server connects", async () => {
    // It timed out at connect_timeout: the line was no JSON, so the answer in it was skipped with the banner.
    // 15 s: only how long a broken connect takes to fail; a Node server's start under load can outlast 3 s.
    const h = hub(ctx.home, { glued: stdioEntry("legacy", { connect_timeout: 15 }, ["--glued-banner"]) });
    expect(await h.settled("glued")).toMatchObject({ state: "connected" });
    expect(text(await h.call("glued", "echo", { text: "after the banner" }))).toBe("after the banner");
  });

  it("a JSON log line on stdout naming a request's id (no jsonrpc, result or error) is skipped, not taken for its answer", async () => {
    const h = hub(ctx.home, { logs: stdioEntry("legacy", {}, ["--json-log"]) });
    expect((await h.settled("logs")).state).toBe("connected");
    for (let i = 0; i < 3; i++)
      expect(text(await h.call("logs", "echo", { text: `hi ${i}` }))).toBe(`hi ${i}`);
  });

  it("gives the child a minimal environment plus env, never the parent's secrets; ${VAR} comes from .env", async () => {
    ctx.home.write(".env", "API_KEY=from-dotenv\n");
    const h = hub(
      ctx.home,
      { fx: stdioEntry("legacy", { env: { PASSED: "${API_KEY}", LITERAL: "${NOPE_UNSET}" } }) },
      {
        env: { PATH: process.env.PATH, HOME: "/tmp", SECRET_TOKEN: "s3cr3t", LANG: "C.UTF-8" },
        parentEnv: {
          PATH: process.env.PATH,
          HOME: "/tmp",
          SECRET_TOKEN: "s3cr3t",
          LANG: "C.UTF-8",
          LC_ALL: "C",
        },
      },
    );
    expect(text(await h.call("fx", "env", { name: "SECRET_TOKEN" }))).toBe("(unset)");
    expect(text(await h.call("fx", "env", { name: "PASSED" }))).toBe("from-dotenv");
    expect(text(await h.call("fx", "env", { name: "LITERAL" }))).toBe("${NOPE_UNSET}");
    expect(text(await h.call("fx", "env", { name: "LC_ALL" }))).toBe("C");
  });

  it("returns isError results as results, and times a call out after `timeout`", async () => {
    // 2 s, not less: "fail" must come back within it, a round trip to a Node process that on a loaded
    // machine can take longer than 0.3 s; "slow" sleeps far past it.
    const h = hub(ctx.home, { fx: stdioEntry("legacy", { timeout: 2 }) });
    const failed = await h.call("fx", "fail", {});
    expect(failed.isError).toBe(true);
    await expect(h.call("fx", "slow", { ms: 20_000 })).rejects.toMatchObject({
      code: "mcp_timeout",
      message: expect.stringMatching(/"slow" did not answer within 2 s/),
    });
  });

  it("serializes calls to one server unless supports_parallel_tool_calls", async () => {
    // Each call (trust: untrusted, a tool without readOnlyHint) stops at its approval until the test lets
    // it through, so the order of approval requests and answers shows when svc started each call.
    const held = () => {
      const events: string[] = [];
      const waiting: Array<(approved: boolean) => void> = [];
      const approvals: ApprovalSurface = {
        approve: ({ args }) => {
          events.push(`asked ${JSON.stringify(args)}`);
          return new Promise<boolean>((resolve) => waiting.push(resolve));
        },
        elicit: async () => ({ action: "decline" }),
      };
      const answered = (name: string) => (result: CallToolResult) => {
        events.push(`${name} answered ${text(result)}`);
        return result;
      };
      return { events, waiting, approvals, answered };
    };
    const s = held();
    const p = held();
    const serial = hub(
      ctx.home,
      { fx: stdioEntry("legacy", { trust: "untrusted" }) },
      { approvals: s.approvals },
    );
    const parallel = hub(
      ctx.home,
      { fx: stdioEntry("legacy", { trust: "untrusted", supports_parallel_tool_calls: true }) },
      { approvals: p.approvals },
    );
    await Promise.all([serial.settled("fx"), parallel.settled("fx")]);

    // One at a time: the second call is not started (asks nothing) until the first has its answer.
    const first = serial.call("fx", "add", { a: 1, b: 1 }).then(s.answered("first"));
    const second = serial.call("fx", "add", { a: 2, b: 2 }).then(s.answered("second"));
    await vi.waitFor(() => expect(s.waiting.length).toBe(1), { timeout: 10_000, interval: 5 });
    s.waiting[0]?.(true);
    await first;
    await vi.waitFor(() => expect(s.waiting.length).toBe(2), { timeout: 10_000, interval: 5 });
    s.waiting[1]?.(true);
    await second;
    expect(s.events).toEqual([
      'asked {"a":1,"b":1}',
      "first answered 2",
      'asked {"a":2,"b":2}',
      "second answered 4",
    ]);

    // Parallel: both calls are started while neither has been let through.
    const both = Promise.all([
      parallel.call("fx", "add", { a: 1, b: 1 }).then(p.answered("first")),
      parallel.call("fx", "add", { a: 2, b: 2 }).then(p.answered("second")),
    ]);
    await vi.waitFor(() => expect(p.waiting.length).toBe(2), { timeout: 10_000, interval: 5 });
    expect(p.events).toEqual(['asked {"a":1,"b":1}', 'asked {"a":2,"b":2}']);
    for (const letThrough of p.waiting) letThrough(true);
    expect((await both).map(text)).toEqual(["2", "4"]);
  });

  it("tools.include wins over exclude, with fnmatch globs against original names", async () => {
    const h = hub(ctx.home, {
      inc: stdioEntry("legacy", { tools: { include: ["e*", "write-note"], exclude: ["echo"] } }),
      exc: stdioEntry("legacy", { tools: { exclude: "s*" } }),
    });
    await Promise.all([h.settled("inc"), h.settled("exc")]);
    expect(
      h
        .toolsOf("inc")
        .map((t) => t.original)
        .sort(),
    ).toEqual(["echo", "env", "write-note"]);
    const exc = h.toolsOf("exc").map((t) => t.original);
    expect(exc).not.toContain("slow");
    expect(exc).not.toContain("snake.ro");
    expect(exc).toContain("echo");
    await expect(h.call("inc", "add", { a: 1, b: 1 })).rejects.toMatchObject({ code: "mcp_call" });
    // Rule 3 is said where the user looks (svc mcp tools/test print status warnings).
    expect(h.status().find((st) => st.name === "inc")?.warnings).toEqual([
      "mcp_servers.inc.tools.exclude is ignored because tools.include is set (include wins) — remove one of them",
    ]);
  });

  it("renders ${VAR} in tools.include / exclude from the profile's .env (spec 2.3: strings anywhere)", async () => {
    ctx.home.write(".env", "ALLOWED_TOOL=echo\nHIDDEN=wri*\n");
    const h = hub(ctx.home, {
      inc: stdioEntry("legacy", { tools: { include: ["${ALLOWED_TOOL}", "add"] } }),
      exc: stdioEntry("legacy", { tools: { exclude: "${env:HIDDEN}" } }),
    });
    await Promise.all([h.settled("inc"), h.settled("exc")]);
    expect(h.toolsOf("inc").map((t) => t.original)).toEqual(["echo", "add"]);
    const excluded = h.toolsOf("exc").map((t) => t.original);
    expect(excluded).toContain("echo");
    expect(excluded).not.toContain("write-note");
  });

  it("registers utility tools only when enabled and the server has the capability", async () => {
    const h = hub(ctx.home, {
      on: stdioEntry("legacy", { tools: { include: "none-match", resources: true, prompts: "yes" } }),
      off: stdioEntry("legacy", { tools: { include: "echo" } }),
      nocap: stdioEntry("legacy", { tools: { include: "none", resources: true, prompts: true } }, [
        "--no-resources",
        "--no-prompts",
      ]),
    });
    await Promise.all([h.settled("on"), h.settled("off"), h.settled("nocap")]);
    expect(
      h
        .toolsOf("on")
        .map((t) => t.name)
        .sort(),
    ).toEqual([
      "mcp__on__get_prompt",
      "mcp__on__list_prompts",
      "mcp__on__list_resources",
      "mcp__on__read_resource",
    ]);
    expect(h.toolsOf("off").map((t) => t.original)).toEqual(["echo"]);
    // Filtering left nothing and the capabilities are missing: no empty toolset.
    expect(h.toolsOf("nocap")).toEqual([]);
    expect(h.tools().some((t) => t.server === "nocap")).toBe(false);
    expect(text(await h.call("on", "read_resource", { uri: "note://readme" }))).toContain("read me");
    expect(text(await h.call("on", "get_prompt", { name: "greet", arguments: { who: "x" } }))).toContain(
      "hello x",
    );
  });

  it("utility tools declare their required arguments and list every page of a paginated server", async () => {
    const h = hub(ctx.home, {
      paged: entry({
        command: process.execPath,
        args: [PAGED_SERVER],
        tools: { resources: true, prompts: true },
      }),
    });
    await h.settled("paged");
    const schema = (name: string) => h.toolsOf("paged").find((t) => t.original === name)?.inputSchema;
    expect(schema("read_resource")).toMatchObject({ required: ["uri"] });
    expect(schema("get_prompt")).toMatchObject({ required: ["name"] });
    expect(h.toolsOf("paged").filter((t) => t.kind === "native")).toHaveLength(5);
    const resources = JSON.parse(text(await h.call("paged", "list_resources", {})));
    expect(resources.resources.map((r: { name: string }) => r.name)).toEqual([
      "res1",
      "res2",
      "res3",
      "res4",
      "res5",
    ]);
    expect(resources.resourceTemplates).toHaveLength(5);
    const { prompts } = JSON.parse(text(await h.call("paged", "list_prompts", {})));
    expect(prompts.map((p: { name: string }) => p.name)).toEqual([
      "prompt1",
      "prompt2",
      "prompt3",
      "prompt4",
      "prompt5",
    ]);
  });

  it("reports a cross-server name collision and does not shadow the first server's tool", async () => {
    const h = hub(ctx.home, {
      "a.b": stdioEntry("legacy", { tools: { include: "echo" } }),
      a_b: stdioEntry("legacy", { tools: { include: "echo" } }),
    });
    await Promise.all([h.settled("a.b"), h.settled("a_b")]);
    const echo = h.tools().filter((t) => t.name === "mcp__a_b__echo");
    expect(echo).toEqual([expect.objectContaining({ server: "a.b" })]);
    expect(h.collisions()).toEqual([
      expect.stringMatching(
        /a_b: "echo" registers as mcp__a_b__echo, already taken by server a\.b \(listed earlier in mcp_servers\)/,
      ),
    ]);
  });

  it("a process that exits during the handshake: the status says how it exited and what it wrote on stderr", async () => {
    const h = hub(ctx.home, {
      crash: entry({
        command: process.execPath,
        args: ["-e", "console.error('starting'); console.error('FOO_API_KEY is not set'); process.exit(3)"],
      }),
      quiet: entry({ command: process.execPath, args: ["-e", "process.exit(0)"] }),
    });
    expect(await h.settled("crash")).toMatchObject({
      state: "failed",
      lastError:
        "mcp_servers.crash: the server process exited (code 3) before the MCP handshake finished — its stderr: starting | FOO_API_KEY is not set",
    });
    expect((await h.settled("quiet")).lastError).toBe(
      "mcp_servers.quiet: the server process exited (code 0) before the MCP handshake finished — it wrote nothing on stderr; check command and args",
    );
  });

  it("a Node.js server that throws a system error: the error line stays in, its block of fields kept as one line", async () => {
    // Node prints the error, its frames, then `{ errno, code, syscall, path }` on five lines of their own.
    const missing = join(ctx.home.dir, "config", "missing.json");
    const script = ctx.home.write(
      "server.js",
      `require("node:fs").readFileSync(${JSON.stringify(missing)});\n`,
    );
    const h = hub(ctx.home, { files: entry({ command: process.execPath, args: [script] }) });
    const { lastError } = await h.settled("files");
    expect(lastError).toMatch(
      /^mcp_servers\.files: the server process exited \(code 1\) before the MCP handshake finished — its stderr: /,
    );
    expect(lastError).toContain(`Error: ENOENT: no such file or directory, open '${missing}' |     at `);
    expect(lastError).toContain(` | { errno: -2, code: 'ENOENT', syscall: 'open', path: '${missing}' }`);
  });

  it("a Node.js server that throws a system error from an fs callback (no frames): the error line stays in", async () => {
    // Node prints `[Error: ENOENT: …] {`, the fields on four lines of their own and `}`.
    const missing = join(ctx.home.dir, "config", "missing.json");
    const script = ctx.home.write(
      "server.js",
      `require("node:fs").readFile(${JSON.stringify(missing)}, (e) => { throw e; });\n`,
    );
    const h = hub(ctx.home, { files: entry({ command: process.execPath, args: [script] }) });
    const { lastError } = await h.settled("files");
    expect(lastError).toMatch(
      /^mcp_servers\.files: the server process exited \(code 1\) before the MCP handshake finished — its stderr: /,
    );
    expect(lastError).toContain(
      ` | [Error: ENOENT: no such file or directory, open '${missing}'] | { errno: -2, code: 'ENOENT', syscall: 'open', path: '${missing}' }`,
    );
  });

  it("a process that prints its usage on stdout (wrong args) and exits: the status quotes those lines", async () => {
    const h = hub(ctx.home, {
      usage: entry({
        command: process.execPath,
        args: ["-e", "console.log('Usage: tool <serve|mcp>'); console.log('Run: tool mcp'); process.exit(2)"],
      }),
    });
    expect((await h.settled("usage")).lastError).toBe(
      "mcp_servers.usage: the server process exited (code 2) before the MCP handshake finished — it wrote nothing on stderr, and on stdout no MCP message but: Usage: tool <serve|mcp> | Run: tool mcp — check command and args",
    );
  });

  it("enabled: false: no process, no discovery, no tools", async () => {
    const h = hub(ctx.home, { off: stdioEntry("legacy", { enabled: false }) });
    expect(h.status()[0]).toMatchObject({ state: "skipped", toolCount: 0 });
    expect(h.tools()).toEqual([]);
    await expect(h.call("off", "echo", { text: "x" })).rejects.toMatchObject({
      message: expect.stringMatching(/disabled/),
    });
  });
});

describe("trust (spec 2.1 trust rules)", () => {
  it("untrusted: unannotated tools need approval; denial fails closed; readOnlyHint (either spelling) skips it", async () => {
    const h = hub(ctx.home, {
      u: stdioEntry("legacy", { trust: "untrusted" }),
      typo: stdioEntry("legacy", { trust: "ful" }),
    });
    await expect(h.call("u", "write-note", { text: "x" })).rejects.toMatchObject({ code: "approval_denied" });
    await expect(h.call("typo", "add", { a: 1, b: 2 })).rejects.toMatchObject({ code: "approval_denied" });
    expect(text(await h.call("u", "echo", { text: "ro" }))).toBe("ro");
    expect(text(await h.call("u", "snake.ro", {}))).toBe("snake");
  });

  it("an approving surface lets the call run; trust: full never asks", async () => {
    const asked: string[] = [];
    const allow = policyApprovals("allow", silentLogger());
    const h = hub(
      ctx.home,
      { u: stdioEntry("legacy", { trust: "untrusted" }), f: stdioEntry() },
      {
        approvals: {
          approve: async (r, s) => {
            asked.push(r.tool);
            return allow.approve(r, s);
          },
          elicit: allow.elicit,
        },
      },
    );
    expect(text(await h.call("u", "add", { a: 1, b: 2 }))).toBe("3");
    expect(text(await h.call("f", "add", { a: 1, b: 2 }))).toBe("3");
    expect(asked).toEqual(["add"]);
  });

  it("an approval that never comes times out and fails closed", async () => {
    const h = hub(
      ctx.home,
      { u: stdioEntry("legacy", { trust: "untrusted", timeout: 0.2 }) },
      {
        approvals: {
          approve: (_r, signal) =>
            new Promise((resolve) => signal.addEventListener("abort", () => resolve(true))),
          elicit: async () => ({ action: "decline" }),
        },
      },
    );
    await expect(h.call("u", "add", { a: 1, b: 2 })).rejects.toMatchObject({
      code: "approval_denied",
      message: expect.stringMatching(/not given in time/),
    });
  });
});

describe("tools/list paging from odd servers", () => {
  const paged = (flags: string[]) =>
    entry({ command: process.execPath, args: [PAGED_SERVER, ...flags], connect_timeout: 5 });
  const natives = (h: McpHub, server: string) =>
    h
      .toolsOf(server)
      .filter((t) => t.kind === "native")
      .map((t) => t.original);

  it('a last page with nextCursor null or "" ends the list', async () => {
    const h = hub(ctx.home, { n: paged(["--tools-end", "null"]), e: paged(["--tools-end", "empty"]) });
    for (const server of ["n", "e"]) {
      const status = await h.settled(server);
      expect(status.state).toBe("connected");
      expect(status.warnings).toBeUndefined();
      expect(natives(h, server)).toEqual(["tool1", "tool2", "tool3", "tool4", "tool5"]);
    }
  });

  it("a cursor the server answers again stops the listing instead of looping until connect_timeout, with a warning", async () => {
    const h = hub(ctx.home, { s: paged(["--tools-cursor-stuck"]) });
    const status = await h.settled("s");
    expect(status.state).toBe("connected");
    expect(natives(h, "s")).toEqual(["tool1", "tool2", "tool3", "tool4"]);
    expect(status.warnings).toEqual([
      'mcp_servers.s: tools/list stopped after 2 pages: the server sent cursor "2" again (a loop in its paging), so any tools of later pages are not registered',
    ]);
    // A call of a tool the cut listing did not reach says why it is not registered.
    await expect(h.call("s", "tool5", {})).rejects.toThrow(
      'mcp_servers.s: no tool "tool5" is registered — it may be on a page svc did not read: tools/list stopped after 2 pages: the server sent cursor "2" again (a loop in its paging), so any tools of later pages are not registered',
    );
  });

  it("a page answered with an error fails the connect naming tools/list and the page, not only the server's error", async () => {
    const h = hub(ctx.home, {
      first: paged(["--tools-fail-page", "1"]),
      third: paged(["--tools-fail-page", "3"]),
    });
    const first = await h.settled("first");
    expect(first.state).toBe("failed");
    expect(first.lastError).toBe(
      "mcp_servers.first: tools/list failed: MCP error -32603: upstream catalog unavailable",
    );
    const third = await h.settled("third");
    expect(third.state).toBe("failed");
    expect(third.lastError).toBe(
      'mcp_servers.third: tools/list failed at page 3 (cursor "4"): MCP error -32603: upstream catalog unavailable',
    );
    expect(natives(h, "third")).toEqual([]);
  });
});

describe("registered names longer than model APIs accept", () => {
  it("are registered as spec 2.5 builds them, with a warning naming them and the fix", async () => {
    const log = captureLogger();
    const server = "s".repeat(50);
    const h = hub(
      ctx.home,
      { [server]: stdioEntry("legacy", { tools: { include: ["echo", "write-note"] } }) },
      {
        logger: log.logger,
      },
    );
    await h.settled(server);
    expect(h.tools().map((t) => t.name)).toEqual([`mcp__${server}__echo`, `mcp__${server}__write_note`]);
    expect(log.messages()).toContain(
      `[mcp] ${server}: mcp__${server}__write_note is longer than 64 characters, the limit of the OpenAI and Anthropic APIs' tool names: model runs offer it shortened (the first 55 characters, _ and a hash), a command agent's MCP client gets it whole — a shorter server name or tools.exclude keeps it as registered`,
    );
  });
});

describe("a tools filter entry that matches nothing", () => {
  it("is logged at connect naming the key and the server's own name it probably meant", async () => {
    const log = captureLogger();
    const h = hub(
      ctx.home,
      { fx: stdioEntry("legacy", { tools: { include: ["echo", "write_note"] } }) },
      {
        logger: log.logger,
      },
    );
    await h.settled("fx");
    expect(h.tools().map((t) => t.name)).toEqual(["mcp__fx__echo"]);
    expect(log.messages()).toContain(
      '[mcp] mcp_servers.fx.tools.include: "write_note" matches no tool of this server — filters use the server\'s own names: did you mean "write-note"?',
    );
  });
});
