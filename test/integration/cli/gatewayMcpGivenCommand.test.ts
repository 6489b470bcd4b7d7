import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { startCliGateway } from "../../helpers/cliGateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, connectFailures, svc } from "./svc.js";

/**
 * A stdio server's `command` (and its `env.PATH`) that a `${VAR}` of the environment gave, the variable named
 * like no credential: `svc config check` named it as config.yaml writes it, but the gateway's failed connect
 * quoted the value (`command not found: /opt/<value>/server`) in its log, the status file and `svc mcp list`,
 * and built its fixes from it (`write command: node and args: [<value>]`, `dos2unix <its path>`).
 */

let home: TempHome;
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  home.cleanup();
});

const env = {
  MCPCMD: "/opt/SECRETV-DIR/server",
  MCPARG: "SECRETV-ARG",
  MCPREL: "SECRETV-REL",
  MCPLINE: "node SECRETV-LINE",
  MCPBIN: "bin",
  MCPNODE: "node",
  MCPPATH: "/SECRETV-PATH",
};

describe(`svc gateway run: an MCP server's command a $\{VAR} of the environment gave`, {
  timeout: 60_000,
}, () => {
  it("is named as config.yaml writes it when its connect fails, with no fix built from the value", async () => {
    home = tempHome();
    home.write("bin/interp", "#!/nonexistent/interpreter\n", 0o755);
    home.write("bin/crlf", "#!/usr/bin/env node\r\nprocess.exit(0)\r\n", 0o755);
    home.write("bin/plain", "not a program\n", 0o644);
    const servers = {
      cm: { command: `$\{MCPCMD}`, args: [`$\{MCPARG}`, "--x"] },
      rel: { command: `./$\{MCPREL}` },
      line: { command: `$\{MCPLINE}` },
      interp: { command: `${home.dir}/$\{MCPBIN}/interp` },
      crlf: { command: `${home.dir}/$\{MCPBIN}/crlf` },
      plain: { command: `${home.dir}/$\{MCPBIN}/plain` },
      epath: { command: `$\{MCPNODE}`, env: { PATH: `$\{MCPPATH}` } },
      unset: { command: `$\{MCP_NOTHING_SETS}` },
    };
    home.write("config.yaml", stringify(cliConfig({}, { mcp_servers: servers })));
    const gateway = await startCliGateway(home, children, env);
    const errors = await connectFailures(home, Object.keys(servers).length);
    const shown = (text: string) => `"${text}" (the value it gives is not shown)`;
    expect(errors).toEqual({
      cm: `mcp_servers.cm: command not found: ${shown(`$\{MCPCMD}`)} — check command (and PATH)`,
      rel: `mcp_servers.rel: command not found: ${shown(`./$\{MCPREL}`)} — a relative command is taken from the working directory (${process.cwd()}), where there is no such file — write its absolute path (or ~/...)`,
      line: `mcp_servers.line: command not found: ${shown(`$\{MCPLINE}`)} — check command (and PATH)`,
      interp: `mcp_servers.interp: command could not be started: ${shown(`${home.dir}/$\{MCPBIN}/interp`)} — the file exists, but the interpreter its #! line names, /nonexistent/interpreter, is not on this machine — install it, or correct the #! line (#!/usr/bin/env <name> finds it on PATH)`,
      crlf: expect.stringMatching(
        /^mcp_servers\.crlf: the server process exited \(code 127\) before the MCP handshake finished — its stderr: .* — the file's first line ends with a carriage return \(the file was saved with Windows line endings\), so its interpreter's name ends with one too: save it with Unix line endings \(dos2unix <the file>\)$/,
      ),
      plain: `mcp_servers.plain: command is not an executable file: ${shown(`${home.dir}/$\{MCPBIN}/plain`)} — make it executable (chmod +x) or set command to its interpreter and args to the script`,
      epath: `mcp_servers.epath: command not found: ${shown(`$\{MCPNODE}`)} — it was looked up in the entry's env.PATH (${shown(`$\{MCPPATH}`)}), which replaces the gateway's PATH for the server process, and the gateway's PATH has it: add its directory to env.PATH (ending it in :$\{PATH} keeps the gateway's directories)`,
      // Nothing set it: the command run was the file's text, quoted as it is.
      unset: `mcp_servers.unset: command not found: $\{MCP_NOTHING_SETS} — $\{MCP_NOTHING_SETS} is not set, so command was run as written — add MCP_NOTHING_SETS=... to the profile's .env or the environment`,
    });
    const list = await svc(home, ["mcp", "list"], { env });
    expect(list.stdout).toContain(`command not found: ${shown(`$\{MCPCMD}`)} — check command (and PATH)`);
    const call = await svc(home, ["mcp", "call", "cm", "anything"], { env });
    expect(call.stderr).toContain(`command not found: ${shown(`$\{MCPCMD}`)}`);
    const seen = [
      gateway.output(),
      readFileSync(join(home.dir, "mcp-cache", "status.json"), "utf8"),
      list.stdout,
      list.stderr,
      call.stderr,
    ];
    expect(seen.join("\n")).not.toContain("SECRETV");
    expect(gateway.output()).not.toContain(`${home.dir}/bin/`);
  });
});
