import { chmodSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc, svcEach } from "./svc.js";

const SERVER = await bundledFixture(join(import.meta.dirname, "../../fixtures/mcp/stdio-server.mjs"));
const COMMENTED =
  "# my gateway\nplatforms:\n  webhook:\n    enabled: true # keep it on\n    host: 127.0.0.1\n";

let home: TempHome;
afterEach(() => home.cleanup());

const config = () => readFileSync(join(home.dir, "config.yaml"), "utf8");
const servers = () => loadConfig({ home: home.dir, env: {} }).config.mcp_servers;

describe("svc mcp add / remove", { timeout: 90_000 }, () => {
  it("adds a command server and a URL server without losing comments; the server works; remove takes it out", async () => {
    home = tempHome();
    home.write("config.yaml", COMMENTED);
    const added = await svc(home, [
      "mcp",
      "add",
      "fx",
      "--env",
      "MODE=1",
      "--",
      process.execPath,
      SERVER,
      "legacy",
    ]);
    expect(added).toMatchObject({ code: 0, stdout: expect.stringContaining("Added mcp_servers.fx") });
    const remote = await svc(home, [
      "mcp",
      "add",
      "remote",
      "--transport",
      "sse",
      "--header",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      "Authorization: Bearer ${REMOTE_TOKEN}",
      "--",
      "https://mcp.example.test/sse",
    ]);
    expect(remote.code).toBe(0);
    expect(config()).toContain("# my gateway");
    expect(config()).toContain("enabled: true # keep it on");
    expect(servers().fx).toMatchObject({
      command: process.execPath,
      args: [SERVER, "legacy"],
      env: { MODE: "1" },
    });
    expect(servers().remote).toMatchObject({
      url: "https://mcp.example.test/sse",
      transport: "sse",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      headers: { Authorization: "Bearer ${REMOTE_TOKEN}" },
    });
    expect((await svc(home, ["mcp", "test", "fx"])).stdout).toContain("12 tools registered");

    const again = await svc(home, ["mcp", "add", "fx", "--", "other"]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("mcp_servers.fx already exists — choose another name, or --force");

    const removed = await svc(home, ["mcp", "remove", "fx"]);
    expect(removed.code).toBe(0);
    expect(Object.keys(servers())).toEqual(["remote"]);
    expect(config()).toContain("# my gateway");
    expect((await svc(home, ["mcp", "remove", "fx"])).code).toBe(2);
  });

  it("refuses bad input before writing anything, and notes a credential written in clear", async () => {
    home = tempHome();
    home.write("config.yaml", COMMENTED);
    const cases = await svcEach(home, [
      ["mcp", "add", "x", "--transport", "stdio", "--", "https://a.test/mcp"],
      ["mcp", "add", "x", "--transport", "http", "--", "npx", "server"],
      ["mcp", "add", "x", "--transport", "ws", "--", "https://a.test/mcp"],
      ["mcp", "add", "bad name", "--", "node"],
      ["mcp", "add", "x"],
      ["mcp", "add", "x", "--env", "TOKEN=abcd1234", "--", "https://a.test/mcp"],
    ]);
    expect(cases.at(-1)?.stderr).toContain(
      "--env applies to command servers (their process environment); a URL server takes --header",
    );
    for (const result of cases) expect(result.code).toBe(2);
    // The bad name is said as a route's is: the character that is not allowed, and a name to write.
    expect(cases[3]?.stderr).toBe(
      'svc: name "bad name" is not a valid server name: use letters, digits, ".", "_" and "-" (1-64 characters) — " " is not one of them: write bad-name\n',
    );
    expect(config()).toBe(COMMENTED);
    // The refused target is quoted without a URL's password or credential query values.
    const quoted = await svcEach(home, [
      ["mcp", "add", "x", "--transport", "stdio", "--", "https://u:pw-7171@a.test/mcp?token=tk-7272"],
      ["mcp", "add", "x", "--transport", "http", "--", "u:pw-7373@a.test:8080/mcp"],
    ]);
    expect(quoted[0]?.stderr).toContain(
      "--transport stdio runs a command, but https://u:[redacted]@a.test/mcp?token=[redacted] is a URL",
    );
    expect(quoted[1]?.stderr).toContain(
      '--transport http needs a URL (http:// or https://), got "u:[redacted]@a.test:8080/mcp"',
    );
    for (const result of quoted) {
      expect(result.code).toBe(2);
      for (const secret of ["pw-7171", "tk-7272", "pw-7373"]) expect(result.stderr).not.toContain(secret);
    }
    chmodSync(join(home.dir, "config.yaml"), 0o644);
    // A URL's password written out (as the Postgres server takes its database) is a credential in the file too.
    const pg = await svc(home, [
      "mcp",
      "add",
      "pg",
      "--",
      "npx",
      "server-postgres",
      "postgresql://u:pg-pw-1@db/app",
    ]);
    expect(pg.code).toBe(0);
    expect(pg.stderr).toContain(
      `Note: args[1] (a URL's password) holds a credential that is written to ${join(home.dir, "config.yaml")} as given, so the file is now readable by you only (mode 0600)`,
    );
    expect(pg.stderr).not.toContain("pg-pw-1");
    expect(statSync(join(home.dir, "config.yaml")).mode & 0o777).toBe(0o600);
    chmodSync(join(home.dir, "config.yaml"), 0o644);
    // A whole command line given as the command (as some clients' configs write it): its words are
    // arguments too, so an option's key or a URL's password among them is a credential in the file.
    for (const [name, line, place] of [
      ["c7", "npx -y @upstash/context7-mcp --api-key ctx-key-81", "command (an option's credential)"],
      ["pg2", "npx server-postgres postgresql://u:pg-pw-82@db/app", "command (a URL's password)"],
    ] as const) {
      const whole = await svc(home, ["mcp", "add", name, "--", line]);
      expect(whole.code).toBe(0);
      expect(whole.stderr).toContain(
        `Note: ${place} holds a credential that is written to ${join(home.dir, "config.yaml")} as given, so the file is now readable by you only (mode 0600)`,
      );
      expect(whole.stderr).not.toMatch(/ctx-key-81|pg-pw-82/);
      expect(statSync(join(home.dir, "config.yaml")).mode & 0o777).toBe(0o600);
      chmodSync(join(home.dir, "config.yaml"), 0o644);
    }
    const secret = await svc(home, ["mcp", "add", "gh", "--env", "GITHUB_TOKEN=ghp_abc", "--", "gh-mcp"]);
    expect(secret.code).toBe(0);
    expect(secret.stderr).toContain(
      `GITHUB_TOKEN is written to ${join(home.dir, "config.yaml")} as given, so the file is now readable by you only (mode 0600); to keep the secret in .env instead, write e.g. --env GITHUB_TOKEN='$\{GITHUB_TOKEN}'`,
    );
    expect(secret.stderr).not.toContain("ghp_abc");
    // A file that holds a credential is not left readable by others.
    expect(statSync(join(home.dir, "config.yaml")).mode & 0o777).toBe(0o600);
    const header = await svc(home, [
      "mcp",
      "add",
      "api",
      "--header",
      "Authorization: Bearer tok-1",
      "--",
      "https://a.test/mcp",
    ]);
    expect(header.stderr).toContain(
      `write e.g. --header 'Authorization: Bearer $\{AUTHORIZATION}' (or the header's own form) and set AUTHORIZATION in .env`,
    );
    expect(header.stderr).not.toContain("tok-1");
    // A key header holds the key alone: the example keeps it so, with no Bearer before it.
    const keyHeader = await svc(home, [
      "mcp",
      "add",
      "k",
      "--header",
      "X-Api-Key: key-1",
      "--",
      "https://k.test/mcp",
    ]);
    expect(keyHeader.stderr).toContain(
      `write e.g. --header 'X-Api-Key: $\{X_API_KEY}' and set X_API_KEY in .env`,
    );
    expect(keyHeader.stderr).not.toContain("key-1");
  });

  it("refuses a credential header given empty (a variable the shell expanded to nothing): exit 2, the file untouched", async () => {
    home = tempHome();
    home.write("config.yaml", COMMENTED);
    // `--header "X-Api-Key: ${MY_KEY}"` in double quotes with MY_KEY unset in the shell arrives so.
    const [key, bearer] = await svcEach(home, [
      ["mcp", "add", "dq", "--header", "X-Api-Key: ", "--", "https://k.test/mcp"],
      ["mcp", "add", "dq", "--header", "Authorization: Bearer ", "--", "https://k.test/mcp"],
    ]);
    expect(key?.code).toBe(2);
    expect(key?.stderr).toContain(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      "--header X-Api-Key: the value is empty, so every connect would send none — the shell likely expanded a ${VAR} inside double quotes to nothing (set in .env, not in the shell): write it in single quotes, --header 'X-Api-Key: ${X_API_KEY}', so svc reads X_API_KEY from .env at each connect; nothing was written",
    );
    expect(bearer?.code).toBe(2);
    expect(bearer?.stderr).toContain(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      "--header Authorization: the value is the scheme Bearer with no credential after it, so every connect would send none — the shell likely expanded a ${VAR} inside double quotes to nothing (set in .env, not in the shell): write it in single quotes, --header 'Authorization: Bearer ${AUTHORIZATION}', so svc reads AUTHORIZATION from .env",
    );
    expect(key?.stderr).not.toContain("mode 0600");
    expect(config()).toBe(COMMENTED);
  });

  it("refuses an --env given empty (a variable the shell expanded to nothing) or a name alone: exit 2, the file untouched", async () => {
    home = tempHome();
    home.write("config.yaml", COMMENTED);
    // `--env "API_KEY=${API_KEY}"` in double quotes with API_KEY unset in the shell arrives so; docker's
    // `-e API_KEY` passes the shell's value, which svc does not.
    const [empty, bare] = await svcEach(home, [
      ["mcp", "add", "fx", "--env", "MODE=1", "--env", "API_KEY=", "--", "node", "srv.mjs"],
      ["mcp", "add", "fx", "--env", "API_KEY", "--", "node", "srv.mjs"],
    ]);
    expect(empty?.code).toBe(2);
    expect(empty?.stderr).toContain(
      `svc: --env API_KEY=: the value is empty, so the server would get API_KEY set to nothing — the shell likely expanded a \${VAR} to nothing (set in .env, not in the shell): write it in single quotes, --env API_KEY='\${API_KEY}', so svc reads API_KEY from .env (or its own environment) at each connect; an empty value meant so is written in config.yaml (env: {API_KEY: ""}); nothing was written`,
    );
    expect(bare?.code).toBe(2);
    expect(bare?.stderr).toContain(
      `svc: --env: expected KEY=value, got "API_KEY" — a server gets no variable of svc's environment or .env by its name alone (as docker's -e API_KEY passes the shell's): write --env API_KEY='\${API_KEY}'`,
    );
    expect(empty?.stdout).toBe("");
    expect(config()).toBe(COMMENTED);
  });

  it("refuses an --env that is a credential with an = of its own, its NAME= forgotten: exit 2, nothing shown or written", async () => {
    home = tempHome();
    home.write("config.yaml", COMMENTED);
    // `--env "$TOKEN"`: the token alone, split at its own = (inside it, or its base64 padding).
    const [inside, padded] = await svcEach(home, [
      ["mcp", "add", "fx", "--env", "sk-live-Qx7a=Zr9b", "--", "node", "srv.mjs"],
      ["mcp", "add", "fx", "--env", "c2VjcmV0LXRva2Vu==", "--", "node", "srv.mjs"],
    ]);
    for (const res of [inside, padded]) {
      expect(res?.code).toBe(2);
      expect(res?.stderr).toContain("svc: --env: ");
      expect(res?.stderr).toContain(
        "(not shown: it may be a credential) — write --env NAME=value, NAME being the variable's name",
      );
      expect(res?.stdout).toBe("");
    }
    expect(inside?.stderr).toContain("the text before the first = is not an environment variable name");
    for (const part of ["sk-live-Qx7a", "Zr9b", "c2VjcmV0LXRva2Vu"])
      expect(`${inside?.stderr}${padded?.stderr}`).not.toContain(part);
    expect(config()).toBe(COMMENTED);
  });

  it("a malformed --env names --env", async () => {
    home = tempHome();
    home.write("config.yaml", COMMENTED);
    const [noEquals, proto] = await svcEach(home, [
      ["mcp", "add", "x", "--env", "NOEQUALS", "--", "node", "srv.mjs"],
      ["mcp", "add", "x", "--env", "__proto__=1", "--", "node", "srv.mjs"],
    ]);
    expect(noEquals.code).toBe(2);
    expect(noEquals.stderr).toContain('svc: --env: expected KEY=value, got "NOEQUALS"');
    expect(proto.code).toBe(2);
    expect(proto.stderr).toContain('svc: --env: "__proto__" cannot be an environment variable name');
    expect(config()).toBe(COMMENTED);
  });

  it("remove takes out an entry the configuration refuses, which would otherwise stop every command", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      `${COMMENTED}mcp_servers:\n  ok: { command: node }\n  pasted: { command: node, disabled: true }\n`,
    );
    // Every command that loads the configuration refuses it, naming the entry.
    expect((await svc(home, ["mcp", "list", "--no-check"])).stderr).toContain(
      'mcp_servers.pasted: unknown key "disabled"',
    );
    const removed = await svc(home, ["mcp", "remove", "pasted"]);
    expect(removed).toMatchObject({ code: 0, stderr: "" });
    expect(config()).toBe(`${COMMENTED}mcp_servers:\n  ok: { command: node }\n`);
    expect(Object.keys(servers())).toEqual(["ok"]);
    const none = await svc(home, ["mcp", "remove", "pasted"]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no MCP server named "pasted"');
    expect(none.stderr).toContain("(known: ok)");
  });

  it("with no config.yaml, starts from the embedded default so the webhook adapter stays on; the file is 0600", async () => {
    home = tempHome();
    expect((await svc(home, ["mcp", "add", "fx", "--", "node", "x.js"])).code).toBe(0);
    expect(loadConfig({ home: home.dir, env: {} }).config.platforms.webhook).toMatchObject({
      enabled: true,
      host: "127.0.0.1",
    });
    expect(statSync(join(home.dir, "config.yaml")).mode & 0o777).toBe(0o600);
    expect(config()).toMatch(
      /^# Created by svc mcp add from the embedded default \(webhook adapter on 127\.0\.0\.1:8644\),\n# which applied while there was no config\.yaml\./,
    );
    expect(config()).toContain("port: 8644");
  });

  it("with no config.yaml and the port in .env (svc gateway setup --port), leaves the port to .env and says so", async () => {
    for (const command of [
      ["mcp", "add", "fx", "--", "node", "x.js"],
      ["mcp", "import", "MCP_JSON"],
    ]) {
      home = tempHome();
      const setup = await svc(home, ["gateway", "setup", "--non-interactive", "--enable", "--port", "9123"]);
      expect(setup.code).toBe(0);
      const mcpJson = home.write(".mcp.json", JSON.stringify({ mcpServers: { fx: { command: "node" } } }));
      const done = await svc(
        home,
        command.map((arg) => (arg === "MCP_JSON" ? mcpJson : arg)),
      );
      expect(done.code).toBe(0);
      const doing = command[1];
      expect(config()).toMatch(
        new RegExp(
          `^# Created by svc mcp ${doing} from what applied while there was no config\\.yaml: the embedded\n# default \\(webhook adapter on 127\\.0\\.0\\.1\\) with WEBHOOK_ENABLED=true, WEBHOOK_PORT=9123 from ${home.dir}/\\.env,\n# which still applies over this file \\(the port is left to it\\)\\.`,
        ),
      );
      expect(config()).not.toContain("8644");
      // The gateway listens where it did before the file existed, also once .env no longer sets the port.
      expect(loadConfig({ home: home.dir, env: {} }).config.platforms.webhook).toMatchObject({
        enabled: true,
        host: "127.0.0.1",
        port: 9123,
      });
      home.write(".env", "", 0o600);
      expect(loadConfig({ home: home.dir, env: {} }).config.platforms.webhook.port).toBe(8644);
      home.cleanup();
    }
  });
});

/** A fresh home with a commented config.yaml, importing a `.mcp.json` of these `mcpServers`. */
async function importMcpServers(mcpServers: Record<string, unknown>) {
  home = tempHome();
  home.write("config.yaml", COMMENTED);
  return svc(home, ["mcp", "import", home.write(".mcp.json", JSON.stringify({ mcpServers }))]);
}

describe("svc mcp import", { timeout: 60_000 }, () => {
  it("Claude Code's .mcp.json (mcpServers)", async () => {
    home = tempHome();
    home.write("config.yaml", COMMENTED);
    const file = home.write(
      ".mcp.json",
      JSON.stringify({
        mcpServers: {
          files: {
            command: "npx",
            args: ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
            env: { DEBUG: "1" },
          },
          api: {
            type: "http",
            url: "https://api.example.test/mcp",
            // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
            headers: { Authorization: "Bearer ${API_KEY}" },
          },
          events: { type: "sse", url: "https://sse.example.test/sse" },
          gh: { command: "gh-mcp", env: { GITHUB_TOKEN: "ghp_imported" } },
        },
      }),
    );
    chmodSync(join(home.dir, "config.yaml"), 0o644);
    const res = await svc(home, ["mcp", "import", file]);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain("Imported files, api, events, gh");
    // A credential written out narrows the file, and the note says so and where it is (never the value).
    expect(statSync(join(home.dir, "config.yaml")).mode & 0o777).toBe(0o600);
    expect(res.stderr).toContain(
      `Note: gh: env.GITHUB_TOKEN holds a credential that is written to ${join(home.dir, "config.yaml")} as given, so the file is now readable by you only (mode 0600); to keep it in .env instead, write it as env.GITHUB_TOKEN: $\{GITHUB_TOKEN} and set GITHUB_TOKEN in .env`,
    );
    expect(res.stderr).not.toContain("ghp_imported");
    expect(servers()).toMatchObject({
      files: {
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
        env: { DEBUG: "1" },
      },
      api: { url: "https://api.example.test/mcp", transport: "http" },
      events: { url: "https://sse.example.test/sse", transport: "sse" },
    });
    expect(config()).toContain("# my gateway");
    // Importing again leaves existing servers alone.
    const again = await svc(home, ["mcp", "import", file]);
    expect(again.stdout).toContain("left as they are: files, api, events, gh (--force replaces them)");
    expect(again.stderr).not.toContain("Note: gh");
  });

  it("VS Code's mcp.json (servers with type, comments, trailing commas, inputs)", async () => {
    home = tempHome();
    home.write("config.yaml", COMMENTED);
    const file = home.write(
      "mcp.json",
      `{
  // VS Code allows comments
  "inputs": [{ "type": "promptString", "id": "token", "password": true }],
  "servers": {
    "fx": { "type": "stdio", "command": ${JSON.stringify(process.execPath)}, "args": [${JSON.stringify(SERVER)}], "envFile": "\${workspaceFolder}/.env" },
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
    "gh": { "type": "http", "url": "https://api.githubcopilot.test/mcp/", "headers": { "Authorization": "Bearer \${input:token}" } },
  },
}`,
    );
    const res = await svc(home, ["mcp", "import", file]);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain("Imported fx, gh");
    expect(res.stderr).toContain("fx: envFile not carried over");
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
    expect(res.stderr).toContain("gh: ${input:token} is another client's variable");
    expect(res.stderr).toContain("inputs: VS Code prompts for these");
    expect(servers().fx).toMatchObject({ command: process.execPath, args: [SERVER] });
    expect(servers().gh).toMatchObject({ url: "https://api.githubcopilot.test/mcp/", transport: "http" });
    expect((await svc(home, ["mcp", "test", "fx"])).code).toBe(0);
  });

  it("every other client's variable of an entry is named, and a disabled that is no boolean is said, not dropped silently", async () => {
    const res = await importMcpServers({
      vars: {
        command: "node",
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
        env: { A: "${input:a}", B: "${input:b}", C: "${input:a}" },
      },
      off: { command: "node", disabled: "true" },
    });
    expect(res.stdout).toContain("Imported vars, off");
    expect(res.stderr).toContain(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      "vars: ${input:a}, ${input:b} are other clients' variables, which svc does not render (carried over as written)",
    );
    expect(res.stderr).toContain(
      'off: disabled "true" is not true or false — not carried over, so the server is imported enabled; write enabled: false under mcp_servers.off to keep it off',
    );
  });

  it("a variable svc renders gets no note; an entry svc refuses says why as config.yaml would", async () => {
    const res = await importMcpServers({
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      fs: { command: "node", args: ["${workspaceFolder}/server.js", "${userHome}"] },
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      multi: { command: "node", args: ["${workspaceFolder:api}/server.js"] },
      n2: { command: 5 },
    });
    expect(res.stdout).toContain("Imported fs, multi");
    expect(res.stderr).not.toContain("fs:");
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
    expect(res.stderr).toContain("multi: ${workspaceFolder:api} is another client's variable");
    expect(res.stderr).toContain("n2: skipped — ");
    expect(res.stderr).toContain("mcp_servers.n2.command: expected a string, got 5");
  });

  it("numbers and booleans in args, env and headers are imported as text; a server named __proto__ is named as skipped", async () => {
    home = tempHome();
    home.write("config.yaml", COMMENTED);
    chmodSync(join(home.dir, "config.yaml"), 0o644);
    const file = home.write(
      ".mcp.json",
      // JSON.stringify of a literal drops a "__proto__" key: the file is written as another client writes it.
      `{"mcpServers": {"__proto__": {"command": "node"}, "num": {"command": "node", "args": ["--port", 8080], "env": {"PORT": 3000, "DEBUG": true, "API_KEY": 12345}}, "hdr": {"url": "https://a.test/mcp", "headers": {"X-Api-Key": 42}}}}`,
    );
    const res = await svc(home, ["mcp", "import", file]);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain("Imported num, hdr");
    expect(res.stderr).toContain(
      'Note: __proto__: skipped — name "__proto__" cannot be used as a server name — choose another',
    );
    // The numeric credentials count as written out: named, never quoted, and the file narrowed.
    expect(res.stderr).toContain("Note: num: env.API_KEY holds a credential");
    expect(res.stderr).toContain("Note: hdr: headers.X-Api-Key holds a credential");
    expect(res.stderr).not.toContain("12345");
    expect(statSync(join(home.dir, "config.yaml")).mode & 0o777).toBe(0o600);
    expect(servers().num).toMatchObject({
      args: ["--port", "8080"],
      env: { PORT: "3000", DEBUG: "true", API_KEY: "12345" },
    });
    expect(servers().hdr?.headers).toEqual({ "X-Api-Key": "42" });
  });

  it("what the file names is shown escaped: a server name or key holding a terminal's control sequence or a line break retitles no window and fakes no line", async () => {
    home = tempHome();
    const file = home.write(
      ".mcp.json",
      JSON.stringify({
        mcpServers: {
          "a\u001b]0;x\u0007b": { command: "node" },
          "c\nImported evil": { command: "node" },
          ok: { command: "node", "x\u001b[2Jy": 1, type: "\u001b[31mred" },
          // A relative command, which is noted with the path as written.
          cmd: { command: "./bin/\u001b]0;t\u0007srv" },
        },
      }),
    );
    const res = await svc(home, ["mcp", "import", file]);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain("Imported ok, cmd");
    expect(res.stderr).not.toContain("\u001b");
    expect(res.stderr).not.toContain("\u0007");
    expect(res.stderr.split("\n").filter((line) => line.startsWith("Imported"))).toEqual([]);
    expect(res.stderr).toContain(
      'Note: "a\\u001b]0;x\\u0007b": skipped — name "a\\u001b]0;x\\u0007b" is not a valid server name',
    );
    expect(res.stderr).toContain(
      'Note: "c\\nImported evil": skipped — name "c\\nImported evil" is not a valid',
    );
    expect(res.stderr).toContain('Note: ok: "x\\u001b[2Jy" not carried over');
    expect(res.stderr).toContain('Note: ok: type "\\u001b[31mred" is not a transport');
    expect(res.stderr).toContain('mcp_servers.cmd: command "./bin/\\u001b]0;t\\u0007srv" is a relative path');
  });

  it("a file saved with a UTF-8 byte order mark (Windows) is read as its editor reads it", async () => {
    home = tempHome();
    const file = home.write(".mcp.json", '\uFEFF{"mcpServers": {"bom": {"command": "node"}}}');
    const res = await svc(home, ["mcp", "import", file]);
    expect(res).toMatchObject({ code: 0, stderr: "" });
    expect(servers().bom).toMatchObject({ command: "node" });
  });

  it("a file of only a server named __proto__ imports nothing and exits 1", async () => {
    home = tempHome();
    const file = home.write(".mcp.json", '{"mcpServers": {"__proto__": {"command": "node"}}}');
    const res = await svc(home, ["mcp", "import", file]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("__proto__: skipped");
  });

  it("an entry with a __proto__ key inside (env, headers) is skipped, naming the key, not written where config.yaml would refuse it", async () => {
    home = tempHome();
    const file = home.write(
      ".mcp.json",
      '{"mcpServers": {"bad": {"command": "node", "env": {"__proto__": "1"}}, "good": {"command": "node"}}}',
    );
    const res = await svc(home, ["mcp", "import", file]);
    expect(res.code).toBe(0);
    expect(res.stderr).toContain(
      "Note: bad: skipped — " +
        `${join(home.dir, "config.yaml")}: mcp_servers.bad.env.__proto__: "__proto__" cannot be used as a name (JavaScript reserves it) — rename it`,
    );
    expect(Object.keys(servers())).toEqual(["good"]);
    expect((await svc(home, ["config", "check"])).code).toBe(0);
  });

  it("a server written twice, or a key written twice inside one, is skipped with a note: JSON keeps only the last, and the other would be lost without a word", async () => {
    home = tempHome();
    const file = home.write(
      ".mcp.json",
      `{"mcpServers": {
        "github": {"command": "npx", "args": ["-y", "gh-one"]},
        "files": {"command": "npx", "args": ["-y", "fs"]},
        "github": {"command": "npx", "args": ["-y", "gh-two"]},
        "db": {"command": "npx", "env": {"DB_URL": "a", "DB_URL": "b"}}
      }}`,
    );
    const res = await svc(home, ["mcp", "import", file]);
    expect(res.code).toBe(0);
    expect(res.stderr).toContain(
      `Note: github: skipped — it is written twice in ${file} (JSON keeps only the last, so the other would be lost): keep one, or give one another name, and import again\n`,
    );
    expect(res.stderr).toContain(
      `Note: db: skipped — its env.DB_URL is written twice in ${file} (JSON keeps only the last): keep one and import again\n`,
    );
    expect(Object.keys(servers())).toEqual(["files"]);
  });

  it("a path that is no file is named as such, with the file to give, not as JSON that cannot be read", async () => {
    home = tempHome();
    const missing = join(home.dir, "nope.json");
    const gone = await svc(home, ["mcp", "import", missing]);
    expect(gone.code).toBe(2);
    expect(gone.stderr).toBe(
      `svc: ${missing}: no such file — give the path of Claude Code's .mcp.json or VS Code's mcp.json\n`,
    );
    // A project directory given for its file: the client files in it are named.
    const project = join(home.dir, "proj");
    home.write("proj/.vscode/mcp.json", '{"servers": {}}');
    const dir = await svc(home, ["mcp", "import", project]);
    expect(dir.code).toBe(2);
    expect(dir.stderr).toBe(
      `svc: ${project}: a directory — give the client's file in it: svc mcp import ${join(project, ".vscode", "mcp.json")}\n`,
    );
    const empty = join(home.dir, "empty");
    home.write("empty/x.txt", "");
    expect((await svc(home, ["mcp", "import", empty])).stderr).toBe(
      `svc: ${empty}: a directory — give the file: Claude Code's .mcp.json or VS Code's mcp.json (neither is in it)\n`,
    );
  });

  // Seen: ga imported with no tools key ("includeTools not carried over (svc has no such key)"): every tool exposed.
  it("a tool filter svc refuses (a null in Gemini CLI's includeTools, in a tools mapping) skips its server, naming the file's key: no allowlist is dropped", async () => {
    home = tempHome();
    home.write("config.yaml", COMMENTED);
    const server = { command: process.execPath, args: [SERVER] };
    const gemini = home.write(
      ".gemini/settings.json",
      JSON.stringify({
        mcpServers: {
          ga: { ...server, includeTools: ["echo", null] },
          gd: { ...server, includeTools: ["echo"] },
        },
      }),
    );
    const res = await svc(home, ["mcp", "import", gemini]);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(`Imported gd from ${gemini}`);
    expect(res.stderr).toContain(
      `Note: ga: skipped — ${gemini}: mcpServers.ga.includeTools: expected a tool name, a glob, or a list of them, got ["echo",null] — a null entry names no tool: remove it\n`,
    );
    expect(res.stderr).not.toContain("no such key");
    expect(Object.keys(servers())).toEqual(["gd"]);
    expect(servers().gd?.tools.include).toEqual(["echo"]);
    // The allowlist holds: of the server's 12 tools, gd registers echo alone.
    expect((await svc(home, ["mcp", "test", "gd"])).stdout).toContain("1 tool registered");
    // svc's own tools mapping, written as in config.yaml: refused alone, the only server, so exit 1.
    const claude = home.write(
      ".mcp.json",
      JSON.stringify({ mcpServers: { gc: { ...server, tools: { include: ["echo", null] } } } }),
    );
    const mapping = await svc(home, ["mcp", "import", claude]);
    expect(mapping.code).toBe(1);
    expect(mapping.stdout).toBe(`Nothing imported from ${claude}.\n`);
    expect(mapping.stderr).toBe(
      `Note: gc: skipped — ${claude}: mcpServers.gc.tools.include: expected a tool name, a glob, or a list of them, got ["echo",null] — a null entry names no tool: remove it\n`,
    );
    expect(Object.keys(servers())).toEqual(["gd"]);
  });

  // Seen: "Imported t1, cp" with "tools not carried over (svc's key takes other values …)": both written with no
  // tools key, every tool of the server exposed.
  it('GitHub Copilot\'s tools list is tools.include (["*"] every tool), and a tools mapping with a key svc does not know skips its server', async () => {
    home = tempHome();
    home.write("config.yaml", COMMENTED);
    const server = { type: "local", command: process.execPath, args: [SERVER] };
    const copilot = home.write(
      ".copilot/mcp-config.json",
      JSON.stringify({
        mcpServers: {
          t1: { ...server, tools: { Include: ["echo"] } },
          t2: { ...server, tools: { include: ["echo"], Exclude: ["x"] } },
          cp: { ...server, tools: ["echo"] },
          none: { ...server, tools: [] },
          all: { ...server, tools: ["*"] },
        },
      }),
    );
    const res = await svc(home, ["mcp", "import", copilot]);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(`Imported cp, none, all from ${copilot}`);
    expect(res.stderr).toContain(
      `Note: t1: skipped — ${copilot}: mcpServers.t1.tools: unknown key "Include" — check the spelling (see docs/configuration.md)\n`,
    );
    expect(res.stderr).toContain(
      `Note: t2: skipped — ${copilot}: mcpServers.t2.tools: unknown key "Exclude" — check the spelling (see docs/configuration.md)\n`,
    );
    expect(res.stderr).not.toContain("not carried over");
    expect(res.stderr).not.toContain("is not a transport svc knows");
    expect(Object.keys(servers())).toEqual(["cp", "none", "all"]);
    expect(servers().cp?.tools.include).toEqual(["echo"]);
    expect(servers().none?.tools.include).toEqual([]);
    expect(servers().all?.tools.include).toBeUndefined();
    // The allowlist holds: of the server's 12 tools, cp registers echo alone, all of them every one.
    expect((await svc(home, ["mcp", "test", "cp"])).stdout).toContain("1 tool registered");
    expect((await svc(home, ["mcp", "test", "all"])).stdout).toContain("12 tools registered");
  });

  // Seen: "Imported a1" with "tools not carried over" and no tools key: a1 registered all 12 tools.
  it("a tools value that is one name is tools.include, in Claude Code's and VS Code's layouts; a number skips its server", async () => {
    home = tempHome();
    home.write("config.yaml", COMMENTED);
    const server = { command: process.execPath, args: [SERVER] };
    const claude = home.write(
      ".mcp.json",
      JSON.stringify({ mcpServers: { a1: { ...server, tools: "echo" }, n1: { ...server, tools: 7 } } }),
    );
    const res = await svc(home, ["mcp", "import", claude]);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(`Imported a1 from ${claude}`);
    expect(res.stderr).toBe(
      `Note: n1: skipped — ${claude}: mcpServers.n1.tools: expected a tool name, a glob, or a list of them, got 7 — put it in quotes if it is meant as text\n`,
    );
    expect(servers().a1?.tools.include).toEqual(["echo"]);
    // The allowlist holds: of the server's 12 tools, a1 registers echo alone.
    expect((await svc(home, ["mcp", "test", "a1"])).stdout).toContain("1 tool registered");
    const vscode = home.write(
      ".vscode/mcp.json",
      JSON.stringify({ servers: { v1: { type: "stdio", ...server, tools: "echo" } } }),
    );
    const res2 = await svc(home, ["mcp", "import", vscode]);
    expect(res2.code).toBe(0);
    expect(res2.stderr).not.toContain("not carried over");
    expect(servers().v1?.tools.include).toEqual(["echo"]);
  });

  it("a file with neither layout is refused", async () => {
    home = tempHome();
    const file = home.write("other.json", '{"mcp": {}}');
    const res = await svc(home, ["mcp", "import", file]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(
      'no "mcpServers" (Claude Code\'s .mcp.json) or "servers" (VS Code\'s mcp.json)',
    );
  });
});

describe("type: is read as transport: in config.yaml", () => {
  it("an entry written as VS Code writes it loads", () => {
    home = tempHome();
    home.write("config.yaml", "mcp_servers:\n  ev:\n    type: sse\n    url: https://a.test/sse\n");
    expect(servers().ev).toMatchObject({ transport: "sse", url: "https://a.test/sse" });
    home.write(
      "config.yaml",
      "mcp_servers:\n  ev:\n    type: sse\n    transport: http\n    url: https://a.test/sse\n",
    );
    // Two transports: named as such, not as a misspelt key.
    expect(() => servers()).toThrow(
      /mcp_servers\.ev\.type: names another transport than transport — type is how Claude Code and VS Code write transport: keep one of them/,
    );
    expect(() => servers()).not.toThrow(/unknown key/);
    // Two spellings of one transport are one setting.
    home.write(
      "config.yaml",
      "mcp_servers:\n  ev:\n    type: streamable-http\n    transport: http\n    url: https://a.test/mcp\n",
    );
    expect(servers().ev).toMatchObject({ transport: "http", url: "https://a.test/mcp" });
  });
});
