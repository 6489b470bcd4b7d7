import { describe, expect, it } from "vitest";
import { tempHome } from "../../helpers/home.js";
import { svc } from "../cli/svc.js";

const TOKEN = "ATATT3xFfGF0-jiraTOKEN-1234567890";
const b64 = (text: string) => Buffer.from(text).toString("base64");

describe("a stdio MCP server printing its credential in base64 on stderr", () => {
  it("svc mcp test shows [redacted] for the token encoded alone and inside user:token, the rest as written", async () => {
    const home = tempHome();
    try {
      const script = [
        "const b64 = (s) => Buffer.from(s).toString('base64');",
        "const token = process.env.JIRA_API_TOKEN;",
        "process.stderr.write('GET /myself -> 401, sent credentials ' + b64('me@example.com:' + token) + '\\n');",
        "process.stderr.write('token (b64): ' + b64(token) + '\\n', () => process.exit(1));",
      ].join("\n");
      home.write(
        "config.yaml",
        `mcp_servers:\n  jira:\n    command: ${JSON.stringify(process.execPath)}\n    args: ["-e", ${JSON.stringify(script)}]\n    env: { JIRA_API_TOKEN: "\${JIRA_API_TOKEN}" }\n`,
      );
      home.write(".env", `JIRA_API_TOKEN=${TOKEN}\n`);
      const result = await svc(home, ["mcp", "test", "jira"]);
      expect(result.code).toBe(1);
      const output = result.stdout + result.stderr;
      expect(output).toContain("token (b64): [redacted]");
      // The user's part stays readable; the characters that also hold the first or last bits of the token may stay.
      const withUser = b64(`me@example.com:${TOKEN}`);
      expect(output).toMatch(
        /sent credentials bWVAZXhhbXBsZS5jb206[A-Za-z0-9+/]{0,1}\[redacted\][A-Za-z0-9+/=]{0,4}/,
      );
      expect(output).not.toContain(b64(TOKEN));
      expect(output).not.toContain(withUser);
      expect(output).not.toContain(TOKEN);
    } finally {
      home.cleanup();
    }
  });
});
