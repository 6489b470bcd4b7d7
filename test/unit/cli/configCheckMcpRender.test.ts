import { afterEach, describe, expect, it } from "vitest";
import { checkConfig } from "../../../src/cli/config/check.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome | undefined;
afterEach(() => home?.cleanup());

/**
 * svc config check named a remote server's unset ${VAR}s, but a set one that renders to an unusable url
 * (ftp://) or header (a line break) passed as ok, while the gateway's every connect of that server fails.
 */
describe("svc config check renders an MCP server's url and headers as a connect does", () => {
  it("warns about a url that renders to no http(s) URL and a header value with a line break", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      [
        "mcp_servers:",
        '  a: { url: "$' + '{BAD_URL}" }',
        '  b: { url: "https://x.test/mcp", headers: { X-Key: "$' + '{MULTI}" } }',
        '  c: { url: "https://$' + '{HOST}/mcp" }',
        "",
      ].join("\n"),
    );
    home.write(".env", 'BAD_URL=ftp://me:pw-123456@x.test/y\nMULTI="a\\nb"\nHOST=ok.test\n', 0o600);
    const report = await checkConfig({ home: home.dir, env: {} });
    expect(report.problems).toEqual([]);
    const mcp = report.warnings.filter((w) => w.includes("mcp_servers."));
    expect(mcp).toHaveLength(2);
    expect(mcp[0]).toMatch(
      /mcp_servers\.a\.url: expected an http:\/\/ or https:\/\/ URL, got "\$\{BAD_URL\}" \(ftp is not supported\) — the gateway starts, but every connect of this server fails$/,
    );
    expect(mcp[1]).toMatch(
      /mcp_servers\.b\.headers\.X-Key: the value rendered from \$\{\.\.\.\} contains a line break/,
    );
    // The rendered secret is never quoted.
    expect(report.warnings.join("\n")).not.toContain("pw-123456");
  });
});

describe("svc config check reads an https server's TLS files as a connect does", () => {
  it('warns about a CA bundle or client certificate that is not there (a quoted "true" is a path)', async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      [
        "mcp_servers:",
        '  ca: { url: "https://x.test/mcp", ssl_verify: "true" }',
        "  cert: { url: https://x.test/mcp, client_cert: [/nowhere/me.crt, /nowhere/me.key] }",
        "  plain: { url: https://x.test/mcp }",
        "",
      ].join("\n"),
    );
    const report = await checkConfig({ home: home.dir, env: {} });
    expect(report.problems).toEqual([]);
    const mcp = report.warnings.filter((w) => w.includes("mcp_servers."));
    expect(mcp).toEqual([
      expect.stringMatching(
        /mcp_servers\.ca: ssl_verify CA bundle file not found: true — .*write ssl_verify: true without quotes.* — the gateway starts, but every connect of this server fails$/,
      ),
      expect.stringMatching(
        /mcp_servers\.cert: client_cert file not found: \/nowhere\/me\.crt — the gateway starts, but every connect of this server fails$/,
      ),
    ]);
  });

  it("also when a variable of the entry is not set, except in the url or a header (docs/mcp.md's example)", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      [
        "mcp_servers:",
        "  internal:",
        "    url: https://mcp.corp.local/mcp",
        "    ssl_verify: /nowhere/corp-ca.pem",
        '    client_cert: [/nowhere/me.crt, /nowhere/me.key, "$' + '{KEY_PASSWORD}"]',
        '  remote: { url: "https://$' + '{REMOTE_HOST}/mcp", ssl_verify: /nowhere/other-ca.pem }',
        "",
      ].join("\n"),
    );
    const report = await checkConfig({ home: home.dir, env: {} });
    expect(report.problems).toEqual([]);
    const mcp = report.warnings.filter((w) => w.includes("mcp_servers."));
    expect(mcp).toEqual([
      expect.stringMatching(/mcp_servers\.internal: \$\{KEY_PASSWORD\} is not set — add KEY_PASSWORD=/),
      // The key password is used as written: the connect goes on, and fails on the missing CA bundle.
      expect.stringMatching(
        /mcp_servers\.internal: ssl_verify CA bundle file not found: \/nowhere\/corp-ca\.pem — the gateway starts, but every connect of this server fails$/,
      ),
      // An unset variable of the url fails each connect closed, before the TLS files: said once.
      expect.stringMatching(/mcp_servers\.remote: \$\{REMOTE_HOST\} is not set — add REMOTE_HOST=/),
    ]);
  });
});
