import { describe, expect, it } from "vitest";
import type { McpServerEntry } from "../../../src/config/sections/mcp.js";
import { notFoundHint } from "../../../src/io/mcp/connect.js";
import { entrySecrets, writtenInlineCredentials } from "../../../src/io/mcp/entrySecrets.js";
import { writtenSecretPaths } from "../../../src/io/secretFileModes.js";

const entry = (fields: Record<string, unknown>) => fields as unknown as McpServerEntry;

/**
 * A stdio entry setting a credential the way a shell line or `env` does — `command: env` with
 * `args: [GITHUB_TOKEN=ghp_..., server]`, or `command: "GITHUB_TOKEN=ghp_... npx"` copied from a shell —
 * was printed whole by svc mcp test ('Testing gh (stdio: env GITHUB_TOKEN=ghp_... server)') and, for the
 * latter, in 'command not found: GITHUB_TOKEN=ghp_... npx' (svc mcp list, status.json, the gateway log).
 */
describe("MCP entries: credential-named NAME=value words", () => {
  it("are credentials of the entry (redacted wherever the entry's credentials are)", () => {
    expect(
      entrySecrets(
        entry({ command: "env", args: ["GITHUB_TOKEN=ghp_arg123", "DEBUG=1", "NODE_OPTIONS=--x", "server"] }),
      ),
    ).toEqual(["ghp_arg123"]);
    expect(entrySecrets(entry({ command: "GITHUB_TOKEN=ghp_cmd456 npx", args: ["-y", "server"] }))).toEqual([
      "ghp_cmd456",
    ]);
  });

  it("written out, they narrow config.yaml (svc mcp add) and are named for a file readable by others", () => {
    expect(writtenInlineCredentials({ command: "env", args: ["API_KEY=k1", "srv"] })).toEqual([
      "args[0] (a NAME=value credential)",
    ]);
    expect(writtenInlineCredentials({ command: "API_KEY=k1 srv" })).toEqual([
      "command (a NAME=value credential)",
    ]);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
    expect(writtenInlineCredentials({ command: "env", args: ["API_KEY=${K}", "srv"] })).toEqual([]);
    expect(
      writtenSecretPaths({ mcp_servers: { gh: { command: "env", args: ["GH_TOKEN=t1", "srv"] } } }),
    ).toEqual(["mcp_servers.gh.args[0] (a NAME=value credential)"]);
  });

  it("a command starting with NAME=value is explained: no shell runs it, the variable goes under env", () => {
    expect(notFoundHint("GITHUB_TOKEN=ghp_cmd456 npx")).toBe(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      "GITHUB_TOKEN=... before the program is how a shell sets a variable, and no shell runs command: write the program alone as command (its arguments in args) and GITHUB_TOKEN under env (a secret as ${GITHUB_TOKEN}, its value in .env)",
    );
  });
});
