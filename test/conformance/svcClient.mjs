// The client under test for the MCP conformance suite (`conformance client --command "node svcClient.mjs"`):
// the suite appends the scenario's server URL and names the scenario in MCP_CONFORMANCE_SCENARIO.
// It drives svc's own CLI (in this process) against a fresh SVC_HOME with that server configured: `svc mcp
// login` for the auth scenarios (the browser is browserStub.mjs), then `svc mcp call` / `svc mcp test`.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
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

const serverUrl = process.argv[process.argv.length - 1];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
const here = import.meta.dirname;
// The test passes how to start svc (the built dist when fresh, see test/helpers/cliEntry.ts); the source by
// default. The commands run in this process through the CLI's own `main`, one after the other: a node start
// and the CLI's loading once per scenario instead of once per command. Built, `main` is the program beside
// main.js, loaded from its code cache as main.js loads it; from source, run.ts.
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
const home = mkdtempSync(join(tmpdir(), "svc-conformance-"));
const env = {
  PATH: process.env.PATH ?? "",
  HOME: home,
  SVC_HOME: home,
  BROWSER: `${process.execPath} ${join(here, "browserStub.mjs")} %s`,
};
const scenarioEnv = process.env;

const svc = async (...args) => {
  process.stdout.write(`$ svc ${args.join(" ")}\n`);
  process.env = { ...env };
  process.exitCode = undefined;
  try {
    await main([process.execPath, "svc", ...args]);
  } finally {
    process.env = scenarioEnv;
  }
  const code = Number(process.exitCode ?? 0);
  process.exitCode = undefined;
  process.stdout.write(`→ exit ${code}\n`);
  return code;
};

try {
  // The suite hands scenario data (auth/pre-registration: the pre-registered client) in MCP_CONFORMANCE_CONTEXT.
  const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}");
  let config = `mcp_servers:\n  conformance:\n    url: ${JSON.stringify(serverUrl)}\n`;
  if (scenario.startsWith("auth/")) config += "    auth: oauth\n";
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
  process.exitCode = code;
} finally {
  rmSync(home, { recursive: true, force: true });
}
// A command may leave a handle open (a keep-alive socket): the scenario ends with its commands.
process.exit(process.exitCode);
