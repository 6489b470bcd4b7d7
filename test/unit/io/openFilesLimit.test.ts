import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { CLI_NODE_ARGS, svcModule } from "../../helpers/cliEntry.js";

const module = (path: string) => JSON.stringify(pathToFileURL(svcModule(path)).href);
const SERVER = await bundledFixture(resolve(import.meta.dirname, "../../fixtures/mcp/empty-server.mjs"));
const LIMIT =
  "too many open files (EMFILE: this process has as many open as its limit allows) — raise its open-file limit (ulimit -n; LimitNOFILE= in a systemd unit, docker run --ulimit nofile=...)";

/**
 * A gateway at its limit on open files (`ulimit -n`: many connections, many MCP servers). An agent run of the
 * `command` provider (and a route script, the terminal tool, forge_comment's gh) went through execa, which on
 * Node's spawn EMFILE throws `subprocess.stdio is not iterable` while the process's own 'error' event, with no
 * listener, ended the gateway: seen under `prlimit --nofile=64` with 38 idle connections held, `[webhook] r:
 * agent run failed … subprocess.stdio is not iterable`, then `[gateway] internal error (an uncaught
 * exception); stopping … spawn cat EMFILE`, exit 1. An MCP server said only `mcp_servers.s32: spawn node EMFILE`.
 */
describe("a process started at the limit on open files", () => {
  it("fails with the limit named and its fix (MCP server, agent command, terminal tool); the process goes on", async () => {
    // The child takes every descriptor its limit leaves, then starts each; an uncaught exception ends it (1).
    const script = `
      import { openSync } from "node:fs";
      import { connectServer } from ${module("io/mcp/connect.js")};
      import { runProcess } from ${module("io/process.js")};
      import { runCappedProcess } from ${module("io/cappedProcess.js")};
      import { mcpServerSchema } from ${module("config/sections/mcp.js")};
      process.on("uncaughtException", (err) => { console.log("uncaught: " + err.message); process.exit(1); });
      const entry = mcpServerSchema.parse({ command: process.execPath, args: [${JSON.stringify(SERVER)}] });
      const run = () => runProcess({ file: "true", args: [], input: "", env: { PATH: process.env.PATH }, timeoutMs: 5000 });
      const capped = () => runCappedProcess({ file: "true", args: [], cwd: "/", env: { PATH: process.env.PATH },
        timeoutMs: 5000, maxOutputBytes: 1024, signal: new AbortController().signal });
      await run(); // loads what a start loads on its first use
      await capped();
      const held = [];
      try { for (;;) held.push(openSync("/dev/null", "r")); } catch {}
      const mcp = await connectServer("s", entry, { scope: () => ({ secrets: {}, env: {} }), interactive: false })
        .then(() => "connected", (err) => err.message);
      const agent = await run();
      const terminal = await capped();
      await new Promise((resolve) => setTimeout(resolve, 100));
      console.log(JSON.stringify({ mcp, agent: agent.ok ? "ran" : agent.why, terminal: terminal.startError ?? "ran" }));
      process.exit(0);`;
    const node = [process.execPath, ...CLI_NODE_ARGS, "--input-type=module", "-e", script];
    const { stdout } = await execa("bash", ["-c", 'ulimit -n 256 && exec "$@"', "bash", ...node], {
      cwd: resolve(import.meta.dirname, "../../.."),
      reject: false,
    });
    expect(JSON.parse(stdout)).toEqual({
      mcp: `mcp_servers.s: the server could not be started: ${LIMIT}`,
      agent: `could not be started (${LIMIT})`,
      terminal: LIMIT,
    });
  }, 30_000);
});
