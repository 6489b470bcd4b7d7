import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterEach, beforeEach, expect, it } from "vitest";
import { stringify } from "yaml";
import { SVC_ARGV } from "../../helpers/cliEntry.js";
import { closedPort } from "../../helpers/closedPort.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc, svcEach } from "../cli/svc.js";
import { STDIO_FIXTURE } from "../mcp/harness.js";

let home: TempHome;
beforeEach(() => {
  home = tempHome();
});
afterEach(() => home.cleanup());

it("svc mcp test does not print the credentials written in the entry's url or arguments", async () => {
  const port = await closedPort();
  home.write(
    "config.yaml",
    stringify({
      mcp_servers: {
        remote: {
          url: `http://me:urlPassw0rd9@127.0.0.1:${port}/mcp?api_key=queryKey77`,
          skip_preflight: true,
        },
        local: {
          command: "/bin/false",
          args: [
            "--header",
            "Authorization: Bearer argToken123",
            "https://api.example/v1?api_key=argQuery88",
          ],
        },
      },
    }),
  );
  const env = { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir };
  const outputs: string[] = [];
  for (const server of ["remote", "local"]) {
    const result = await promisify(execFile)(process.execPath, [...SVC_ARGV, "mcp", "test", server], {
      env,
    }).catch((err: { stdout: string; stderr: string }) => err);
    outputs.push(result.stdout + result.stderr);
  }
  expect(outputs[0]).toMatch(
    /^Testing remote \(http: http:\/\/me:\[redacted\]@127\.0\.0\.1:\d+\/mcp\?api_key=\[redacted\]\)/,
  );
  expect(outputs[1]).toMatch(
    /^Testing local \(stdio: \/bin\/false --header Authorization: Bearer \[redacted\] https:\/\/api\.example\/v1\?api_key=\[redacted\]\)/,
  );
  for (const secret of ["urlPassw0rd9", "queryKey77", "argToken123", "argQuery88"])
    expect(outputs.join("\n")).not.toContain(secret);
}, 30_000);

it("svc mcp test shows an escape sequence in the entry's arguments (an install link's) as \\u001b, never raw", async () => {
  home.write(
    "config.yaml",
    stringify({ mcp_servers: { odd: { command: "no-such-command-svc-test", args: ["a\u001b[2Jb"] } } }),
  );
  const result = await svc(home, ["mcp", "test", "odd"]);
  expect(result.code).toBe(1);
  expect(result.stdout).toBe("Testing odd (stdio: no-such-command-svc-test a\\u001b[2Jb)\n");
});

it("svc mcp test shows a server name's control characters (a config.yaml key written by hand) escaped, in quotes, never raw", async () => {
  const osc = "e\u001b]0;pwned\u0007Z";
  const broken = 'q"b\\c\nd';
  home.write(
    "config.yaml",
    stringify({
      mcp_servers: {
        [osc]: { command: "no-such-command-svc-test" },
        [broken]: { command: "no-such-command-svc-test" },
      },
    }),
  );
  const titled = await svc(home, ["mcp", "test", osc]);
  expect(titled.code).toBe(1);
  expect(titled.stdout).toBe('Testing "e\\u001b]0;pwned\\u0007Z" (stdio: no-such-command-svc-test)\n');
  expect(titled.stdout + titled.stderr).not.toContain("\u001b");
  const split = await svc(home, ["mcp", "test", broken]);
  expect(split.code).toBe(1);
  expect(split.stdout).toBe('Testing "q\\"b\\\\c\\nd" (stdio: no-such-command-svc-test)\n');
});

it("svc mcp test does not print a signed url's signature or a jwt in its query (Azure SAS sig=, X-Amz-Signature=)", async () => {
  const port = await closedPort();
  home.write(
    "config.yaml",
    stringify({
      mcp_servers: {
        sas: {
          url: `http://127.0.0.1:${port}/mcp?sv=2022-11-02&sig=sasSig0nature41&design=wide`,
          skip_preflight: true,
        },
        s3: {
          url: `http://127.0.0.1:${port}/mcp?X-Amz-Signature=amzSig42&jwt=jwtValue43&pwd=pwdValue44`,
          skip_preflight: true,
        },
      },
    }),
  );
  const outputs = await svcEach(home, [
    ["mcp", "test", "sas"],
    ["mcp", "test", "s3"],
  ]);
  expect(outputs[0]?.stdout).toMatch(
    /^Testing sas \(http: http:\/\/127\.0\.0\.1:\d+\/mcp\?sv=2022-11-02&sig=\[redacted\]&design=wide\)/,
  );
  expect(outputs[1]?.stdout).toMatch(
    /^Testing s3 \(http: http:\/\/127\.0\.0\.1:\d+\/mcp\?X-Amz-Signature=\[redacted\]&jwt=\[redacted\]&pwd=\[redacted\]\)/,
  );
  const all = outputs.map((o) => `${o?.stdout}${o?.stderr}`).join("\n");
  for (const secret of ["sasSig0nature41", "amzSig42", "jwtValue43", "pwdValue44"])
    expect(all).not.toContain(secret);
}, 30_000);

it("svc mcp call and logout name a server with control characters in quotes, escaped, and give a command that pastes back", async () => {
  const osc = "e\u001b]0;pwned\u0007Z";
  const shown = '"e\\u001b]0;pwned\\u0007Z"';
  home.write(
    "config.yaml",
    stringify({
      mcp_servers: {
        [osc]: { command: process.execPath, args: [STDIO_FIXTURE] },
        [`${osc}-gone`]: { command: "no-such-command-svc-test" },
      },
    }),
  );
  const unknown = await svc(home, ["mcp", "call", osc, "nope", "--args", "{}"]);
  expect(unknown.code).not.toBe(0);
  expect(unknown.stderr).toContain(
    `mcp_servers.${shown}: no tool "nope" is registered — run svc mcp tools $'e\\x1b]0;pwned\\x07Z' (`,
  );
  const failed = await svc(home, ["mcp", "call", `${osc}-gone`, "t", "--args", "{}"]);
  expect(failed.code).not.toBe(0);
  expect(failed.stderr).toContain(`mcp_servers."e\\u001b]0;pwned\\u0007Z-gone": `);
  const logout = await svc(home, ["mcp", "logout", osc]);
  expect(logout.code).not.toBe(0);
  expect(logout.stderr).toContain(`${shown}: not logged in — no saved login at `);
  for (const res of [unknown, failed, logout]) expect(res.stdout + res.stderr).not.toContain("\u001b");
});
