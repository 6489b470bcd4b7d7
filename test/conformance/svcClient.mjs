// The client under test for the MCP conformance suite (`conformance client --command "node svcClient.mjs"`):
// the suite appends the scenario's server URL and names the scenario in MCP_CONFORMANCE_SCENARIO.
// It drives svc's own CLI against a fresh SVC_HOME with that server configured: `svc mcp login` for the
// auth scenarios (the browser is browserStub.mjs), then `svc mcp call` / `svc mcp test`.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const serverUrl = process.argv[process.argv.length - 1];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
const here = import.meta.dirname;
const main = join(here, "../../src/cli/main.ts");
const home = mkdtempSync(join(tmpdir(), "svc-conformance-"));
const env = {
  PATH: process.env.PATH ?? "",
  HOME: home,
  SVC_HOME: home,
  BROWSER: `${process.execPath} ${join(here, "browserStub.mjs")} %s`,
};

const svc = (...args) => {
  const run = spawnSync(process.execPath, ["--import", "tsx", main, ...args], {
    env,
    encoding: "utf8",
    cwd: join(here, "../.."),
  });
  process.stdout.write(`$ svc ${args.join(" ")} → exit ${run.status}\n${run.stdout}`);
  process.stderr.write(run.stderr);
  return run.status ?? 1;
};

try {
  writeFileSync(
    join(home, "config.yaml"),
    `mcp_servers:\n  conformance:\n    url: ${JSON.stringify(serverUrl)}\n${scenario.startsWith("auth/") ? "    auth: oauth\n" : ""}`,
    { mode: 0o600 },
  );
  let code = 0;
  if (scenario.startsWith("auth/")) code = svc("mcp", "login", "conformance");
  if (code === 0) {
    code =
      scenario === "tools_call"
        ? svc("mcp", "call", "conformance", "add_numbers", "--args", '{"a":2,"b":3}')
        : svc("mcp", "test", "conformance");
  }
  process.exitCode = code;
} finally {
  rmSync(home, { recursive: true, force: true });
}
