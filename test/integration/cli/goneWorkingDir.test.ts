import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, realpathSync, rmdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { SVC_ARGV } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

/**
 * svc started from a working directory removed since (a release directory a deploy replaced, a checkout
 * deleted under a shell): Node's process.cwd() throws, which only a relative SVC_HOME needs.
 */

// Run from dist/ only (npm test builds it first): tsx, which runs the source, needs a working directory itself.
const built = !SVC_ARGV.includes("tsx");

let home: TempHome | undefined;
afterEach(() => {
  home?.cleanup();
  home = undefined;
});

/**
 * `svc <args>` run from `dir`, which is removed just before svc starts; SIGTERM once its stdout shows
 * `stopAt`, or once `onStdout` (called with all of stdout at each write) resolves to true.
 */
function fromRemovedDir(
  dir: string,
  args: readonly string[],
  svcHome: string,
  stopAt?: string,
  onStdout?: (stdout: string) => Promise<boolean> | undefined,
) {
  mkdirSync(dir);
  const child = spawn(
    "sh",
    ["-c", 'cd "$1" && rmdir "$1" && shift && exec "$@"', "sh", dir, process.execPath, ...SVC_ARGV, ...args],
    {
      env: { PATH: process.env.PATH ?? "", HOME: home?.dir ?? "/", SVC_HOME: svcHome },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => {
    stdout += d;
    if (stopAt !== undefined && stdout.includes(stopAt)) child.kill("SIGTERM");
    void onStdout?.(stdout)?.then((stop) => stop && child.kill("SIGTERM"));
  });
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on("exit", (code) => resolve({ code, stdout, stderr })),
  );
}

describe.runIf(built)("svc run from a working directory that was removed", { timeout: 60_000 }, () => {
  it("works with an absolute SVC_HOME, which needs no working directory", async () => {
    home = tempHome();
    const check = await fromRemovedDir(join(home.dir, "release"), ["config", "check"], home.dir);
    expect(check.stderr).toBe("");
    expect(check.stdout).toContain(`ok: webhook on 127.0.0.1:8644`);
    expect(check.code).toBe(0);
    const list = await fromRemovedDir(join(home.dir, "release"), ["webhook", "list"], home.dir);
    expect(list).toMatchObject({ code: 0, stderr: "" });
  });

  it("reads a config.yaml with ${VAR} references (no working directory is needed to replace them)", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      "platforms:\n  webhook:\n    enabled: true\n    host: 127.0.0.1\n    port: 0\n    routes:\n      a:\n        secret: ${GH_SECRET}\n",
      0o600,
    );
    home.write(".env", "GH_SECRET=s3cret\n", 0o600);
    const check = await fromRemovedDir(join(home.dir, "release"), ["config", "check"], home.dir);
    expect(check.stderr).toBe("");
    expect(check.stdout).toContain("ok: webhook on 127.0.0.1:0, 1 route");
    expect(check.code).toBe(0);
  });

  it("the gateway starts, and warns that it works from SVC_HOME, where command agents and stdio MCP servers start, not in the directory that is gone; SIGTERM stops it with exit 0", async () => {
    home = tempHome();
    const dir = realpathSync(home.dir);
    const agentCwd = join(dir, "agent-cwd.txt");
    const mcpCwd = join(dir, "mcp-cwd.txt");
    home.write(
      "config.yaml",
      [
        "agent:",
        "  provider: command",
        `  command: ["/bin/sh", "-c", "/bin/pwd -P > ${agentCwd}; cat"]`,
        "mcp_servers:",
        "  s:",
        "    command: /bin/sh",
        `    args: ["-c", "/bin/pwd -P > ${mcpCwd}; exec cat > /dev/null"]`,
        "platforms:",
        "  webhook:",
        "    enabled: true",
        "    host: 127.0.0.1",
        "    port: 0",
        "    routes:",
        "      a:",
        "        secret: INSECURE_NO_AUTH",
        "        deliver: log",
        "",
      ].join("\n"),
    );
    let posted = false;
    const run = await fromRemovedDir(
      join(home.dir, "release"),
      ["gateway", "run", "--port", "0"],
      home.dir,
      undefined,
      (out) => {
        const port = /Listening on 127\.0\.0\.1:(\d+)/.exec(out)?.[1];
        if (port === undefined) return undefined;
        if (!posted) {
          posted = true;
          void fetch(`http://127.0.0.1:${port}/webhooks/a`, {
            method: "POST",
            body: "{}",
            headers: { "content-type": "application/json" },
          });
        }
        // Stopped once the run ended (its reply logged, or its failure) and the MCP server has started.
        return Promise.resolve(/\[webhook\] a( reply:|: agent run failed)/.test(out) && existsSync(mcpCwd));
      },
    );
    expect(run.stdout).toContain(
      `WARN [gateway] the working directory is gone (ENOENT: no such file or directory, uv_cwd): the gateway works from SVC_HOME (${home.dir}) instead — command agents and stdio MCP servers start there, and a relative command is taken from there; restart the gateway from a directory that exists to start them in it (systemd: WorkingDirectory=)`,
    );
    expect(run.stdout).toContain("Listening on 127.0.0.1:");
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain("agent run failed");
    expect(run.stdout).toContain("[webhook] a reply:");
    expect(readFileSync(agentCwd, "utf8")).toBe(`${dir}\n`);
    expect(readFileSync(mcpCwd, "utf8")).toBe(`${dir}\n`);
  });

  it("a working directory removed while the gateway runs: agents start in SVC_HOME", async () => {
    home = tempHome();
    const dir = realpathSync(home.dir);
    const agentCwd = join(dir, "agent-cwd.txt");
    home.write(
      "config.yaml",
      [
        "agent:",
        "  provider: command",
        `  command: ["/bin/sh", "-c", "/bin/pwd -P > ${agentCwd}; cat"]`,
        "platforms:",
        "  webhook:",
        "    enabled: true",
        "    host: 127.0.0.1",
        "    port: 0",
        "    routes:",
        "      a:",
        "        secret: INSECURE_NO_AUTH",
        "        deliver: log",
        "",
      ].join("\n"),
    );
    const release = join(home.dir, "release");
    mkdirSync(release);
    const child = spawn(process.execPath, [...SVC_ARGV, "gateway", "run", "--port", "0"], {
      cwd: release,
      env: { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let posted = false;
    child.stdout.on("data", (d) => {
      stdout += d;
      const port = /Listening on 127\.0\.0\.1:(\d+)/.exec(stdout)?.[1];
      if (port !== undefined && !posted) {
        posted = true;
        // The deploy removes the release directory the gateway was started from.
        rmdirSync(release);
        void fetch(`http://127.0.0.1:${port}/webhooks/a`, {
          method: "POST",
          body: "{}",
          headers: { "content-type": "application/json" },
        });
      }
      if (/\[webhook\] a( reply:|: agent run failed)/.test(stdout)) child.kill("SIGTERM");
    });
    await new Promise((resolve) => child.on("exit", resolve));
    expect(stdout).not.toContain("agent run failed");
    expect(readFileSync(agentCwd, "utf8")).toBe(`${dir}\n`);
  });

  it("svc mcp test and svc cron run start their processes in SVC_HOME too, as the gateway does", async () => {
    home = tempHome();
    const dir = realpathSync(home.dir);
    const mcpCwd = join(dir, "mcp-cwd.txt");
    const agentCwd = join(dir, "agent-cwd.txt");
    const server = await bundledFixture(join(import.meta.dirname, "../../fixtures/mcp/stdio-server.mjs"));
    home.write(
      "config.yaml",
      [
        "agent:",
        "  provider: command",
        `  command: ["/bin/sh", "-c", "/bin/pwd -P > ${agentCwd}; cat"]`,
        "mcp_servers:",
        "  s:",
        "    command: /bin/sh",
        `    args: ["-c", "/bin/pwd -P > ${mcpCwd}; exec ${process.execPath} ${server}"]`,
        "",
      ].join("\n"),
    );
    const test = await fromRemovedDir(join(home.dir, "release"), ["mcp", "test", "s"], home.dir);
    expect(test.stdout).toContain("connected in");
    expect(test.code).toBe(0);
    expect(readFileSync(mcpCwd, "utf8")).toBe(`${dir}\n`);
    const created = await fromRemovedDir(
      join(home.dir, "release"),
      ["cron", "create", "--name", "j", "--schedule", "every 1h", "--prompt", "hello"],
      home.dir,
    );
    expect(created).toMatchObject({ code: 0 });
    const run = await fromRemovedDir(join(home.dir, "release"), ["cron", "run", "j"], home.dir);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(readFileSync(agentCwd, "utf8")).toBe(`${dir}\n`);
  });

  it("a relative SVC_HOME says that the directory it is relative to is gone, and what to do (exit 1)", async () => {
    home = tempHome();
    const res = await fromRemovedDir(join(home.dir, "release"), ["webhook", "list"], "data");
    expect(res.stderr).toMatch(
      /^svc: SVC_HOME is the relative path data, but the working directory it is relative to is gone \(ENOENT[^)]*\) — set SVC_HOME to an absolute path, or run svc from a directory that exists\n$/,
    );
    expect(res.code).toBe(1);
  });
});
