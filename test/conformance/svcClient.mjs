// The client under test for the MCP conformance suite (`conformance client --command "node svcClient.mjs"`):
// the suite appends the scenario's server URL and names the scenario in MCP_CONFORMANCE_SCENARIO.
// It drives svc's own CLI (in this process) against a fresh SVC_HOME with that server configured: `svc mcp
// login` for the auth scenarios (the browser is browserStub.mjs), then `svc mcp call` / `svc mcp test`.
//
// `node svcClient.mjs --serve <socket>` (what test/conformance/mcpClient.test.ts starts, once) loads svc's CLI
// once and runs the scenarios forwardClient.mjs hands it over the socket, one at a time, each as a run of this
// script would: the suite's command is then forwardClient.mjs, a node start with nothing to load.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, extname, join } from "node:path";
import { pathToFileURL } from "node:url";

// Scenarios whose checks happen during a tool call: the tool and its arguments.
const TOOL_CALLS = {
  tools_call: ["add_numbers", "--args", '{"a":2,"b":3}'],
  "auth/scope-step-up": ["test-tool", "--args", "{}"],
  // No terminal here: the form is answered with its defaults only because the driver asks for it.
  "elicitation-sep1034-client-defaults": [
    "test_client_elicitation_defaults",
    "--args",
    "{}",
    "--elicitation",
    "defaults",
  ],
  "sse-retry": ["test_reconnection", "--args", "{}"],
};

const here = import.meta.dirname;
// The test passes how to start svc (the built dist when fresh, see test/helpers/cliEntry.ts); the source by
// default. The commands run in this process through the CLI's own `main`, one after the other: a node start
// and the CLI's loading once per scenario (once in all, serving) instead of once per command. Built, `main`
// is the program beside main.js, loaded from its code cache as main.js loads it; from source, run.ts.
const svcArgv = process.env.SVC_CONFORMANCE_ARGV
  ? JSON.parse(process.env.SVC_CONFORMANCE_ARGV)
  : [join(here, "../../src/cli/main.ts")];
const entry = svcArgv[svcArgv.length - 1];
// Run by hand (docs/mcp-oauth.md: `--command "node test/conformance/svcClient.mjs"`), plain node cannot
// import the TypeScript source: the tsx loader is registered here, as the test's argv does with --import tsx.
if (extname(entry) === ".ts" && !process.env.SVC_CONFORMANCE_ARGV) (await import("tsx/esm/api")).register();
const { main } =
  extname(entry) === ".ts"
    ? await import(pathToFileURL(join(dirname(entry), "run.ts")).href)
    : (await import(pathToFileURL(join(dirname(entry), "../io/compileCache.js")).href)).loadBundle(
        join(dirname(entry), "svc.cjs"),
        [process.execPath, "svc", "conformance-client"],
      ).exports;
const ownEnv = process.env;

/**
 * Runs one scenario against the server at `serverUrl` (`context`: the suite's MCP_CONFORMANCE_CONTEXT) and
 * answers the exit code of its last command; what the commands print goes to this process's stdout.
 */
async function runScenario(serverUrl, scenario, context) {
  const home = mkdtempSync(join(tmpdir(), "svc-conformance-"));
  const env = {
    PATH: ownEnv.PATH ?? "",
    HOME: home,
    SVC_HOME: home,
    BROWSER: `${process.execPath} ${join(here, "browserStub.mjs")} %s`,
  };
  const svc = async (...args) => {
    process.stdout.write(`$ svc ${args.join(" ")}\n`);
    process.env = { ...env };
    process.exitCode = undefined;
    try {
      await main([process.execPath, "svc", ...args]);
    } finally {
      process.env = ownEnv;
    }
    const code = Number(process.exitCode ?? 0);
    process.exitCode = undefined;
    process.stdout.write(`→ exit ${code}\n`);
    return code;
  };
  try {
    let config = `mcp_servers:\n  conformance:\n    url: ${JSON.stringify(serverUrl)}\n`;
    if (scenario.startsWith("auth/")) config += "    auth: oauth\n";
    // auth/pre-registration: the pre-registered client the suite hands over.
    if (typeof context.client_id === "string") {
      config += `    oauth:\n      client_id: ${JSON.stringify(context.client_id)}\n`;
      if (typeof context.client_secret === "string")
        config += `      client_secret: ${JSON.stringify(context.client_secret)}\n      token_endpoint_auth_method: client_secret_basic\n`;
    }
    // auth/basic-cimd: the suite's document URL, whose host does not resolve here (svc presents it anyway).
    if (scenario === "auth/basic-cimd")
      config += `    oauth:\n      client_metadata_url: "https://conformance-test.local/client-metadata.json"\n`;
    writeFileSync(join(home, "config.yaml"), config, { mode: 0o600 });
    let code = 0;
    if (scenario.startsWith("auth/")) code = await svc("mcp", "login", "conformance");
    if (code === 0) {
      code =
        scenario in TOOL_CALLS
          ? await svc("mcp", "call", "conformance", ...TOOL_CALLS[scenario])
          : await svc("mcp", "test", "conformance");
    }
    return code;
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/** For the length of `run`: what this process writes to stdout and stderr goes to `sink` instead. */
async function captured(sink, run) {
  const { stdout, stderr } = process;
  const writes = [stdout.write, stderr.write];
  const write = (chunk, encoding, callback) => {
    sink(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"));
    const done = typeof encoding === "function" ? encoding : callback;
    if (typeof done === "function") queueMicrotask(done);
    return true;
  };
  stdout.write = write;
  stderr.write = write;
  try {
    return await run();
  } finally {
    [stdout.write, stderr.write] = writes;
  }
}

/**
 * Serving: one scenario at a time (the CLI reads process.env and reports in process.exitCode). A request is
 * one line of JSON ({ serverUrl, scenario, context }); the answer, lines of JSON: { out } as the commands
 * print, then { exit }. The parent (the test, over IPC) hears { done: scenario, code } after each scenario,
 * and is asked for the pinned callback ports' lock ({ lock: "acquire" }, answered { locked: true | error })
 * before each scenario whose name starts with SVC_CONFORMANCE_LOCKED, which it releases after ({ lock: "release" }).
 */
function serve(socketPath) {
  const lockedPrefix = ownEnv.SVC_CONFORMANCE_LOCKED;
  const parent = (message) => process.send?.(message);
  const lock = () =>
    new Promise((resolve) => {
      process.once("message", (answer) =>
        resolve(answer.locked === true ? undefined : String(answer.locked)),
      );
      parent({ lock: "acquire" });
    });
  let queue = Promise.resolve();
  const server = createServer((socket) => {
    let request = "";
    socket.setEncoding("utf8");
    socket.on("error", () => {});
    const send = (message) => {
      if (!socket.destroyed) socket.write(`${JSON.stringify(message)}\n`);
    };
    socket.on("data", (chunk) => {
      request += chunk;
      if (!request.includes("\n")) return;
      const { serverUrl, scenario, context } = JSON.parse(request);
      queue = queue.then(async () => {
        let code = 1;
        const locked = lockedPrefix !== undefined && scenario.startsWith(lockedPrefix);
        const lockError = locked ? await lock() : undefined;
        try {
          if (lockError === undefined)
            code = await captured(
              (out) => send({ out }),
              () => runScenario(serverUrl, scenario, context),
            );
          else send({ out: `the pinned callback ports' lock: ${lockError}\n` });
        } catch (e) {
          send({ out: `${e?.stack ?? e}\n` });
        } finally {
          if (locked && lockError === undefined) parent({ lock: "release" });
        }
        parent({ done: scenario, code });
        send({ exit: code });
        socket.end();
      });
    });
  });
  // The test ends this process by closing the IPC channel (and so does its worker's exit).
  process.on("disconnect", () => process.exit(0));
  server.listen(socketPath, () => parent({ ready: true }));
}

if (process.argv[2] === "--serve") serve(process.argv[3]);
else {
  const serverUrl = process.argv[process.argv.length - 1];
  const scenario = ownEnv.MCP_CONFORMANCE_SCENARIO ?? "";
  // The suite hands scenario data (auth/pre-registration: the pre-registered client) in MCP_CONFORMANCE_CONTEXT.
  const context = JSON.parse(ownEnv.MCP_CONFORMANCE_CONTEXT ?? "{}");
  process.exitCode = await runScenario(serverUrl, scenario, context);
  // A command may leave a handle open (a keep-alive socket): the scenario ends with its commands.
  process.exit(process.exitCode);
}
