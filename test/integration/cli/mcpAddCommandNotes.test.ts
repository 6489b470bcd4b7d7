import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { loadInProcessCli, runInProcess } from "../../helpers/inProcessCli.js";

// The first in-process command of a worker would load the CLI within a test's time; loaded here instead.
beforeAll(() => loadInProcessCli(), 180_000);

let home: TempHome;
let project: string;
afterEach(() => {
  home.cleanup();
  rmSync(project, { recursive: true, force: true });
});

/** A project directory, as a user runs `svc mcp add` from, with a server script and a data directory. */
function makeProject(): string {
  const dir = mkdtempSync(join(tmpdir(), "svc-mcp-add-project-"));
  mkdirSync(join(dir, "dist"));
  writeFileSync(join(dir, "dist", "index.js"), "");
  writeFileSync(join(dir, "server.py"), "");
  mkdirSync(join(dir, "mcp-server-git"));
  return dir;
}

/** `svc <args>` run from `project`, in this worker (helpers/inProcessCli.ts): what it writes and says. */
const svcInProject = (args: readonly string[]) =>
  runInProcess(args, { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir }, project);

const entry = (name: string) =>
  parse(readFileSync(join(home.dir, "config.yaml"), "utf8")).mcp_servers[name] as Record<string, unknown>;

describe("svc mcp add of a command server the gateway could not start as written", {
  timeout: 60_000,
}, () => {
  it("names the relative paths, which the gateway takes from its own working directory, and their absolute form; the entry is written as given", async () => {
    home = tempHome();
    project = makeProject();
    const res = await svcInProject([
      "mcp",
      "add",
      "local",
      "--",
      "node",
      "dist/index.js",
      "--root",
      "../data",
    ]);
    expect(res.code).toBe(0);
    expect(res.stderr).toBe(
      `Note: mcp_servers.local: args[0] "dist/index.js", args[2] "../data" are relative paths, taken from the working directory of the gateway that starts the server, not from this one (${project}) — write them as ${join(project, "dist", "index.js")}, ${join(project, "..", "data")} (svc mcp add local --force -- …)\n`,
    );
    expect(entry("local")).toEqual({ command: "node", args: ["dist/index.js", "--root", "../data"] });
    const script = await svcInProject(["mcp", "add", "py", "--", "./server.py"]);
    expect(script.stderr).toContain(
      `Note: mcp_servers.py: command "./server.py" is a relative path, taken from the working directory of the gateway that starts the server, not from this one (${project}) — write it as ${join(project, "server.py")}`,
    );
  });

  it("warns of a command found on no PATH directory, naming the file and key, as svc config check does", async () => {
    home = tempHome();
    project = makeProject();
    const res = await svcInProject(["mcp", "add", "files", "--", "npxx", "-y", "@scope/server"]);
    expect(res.code).toBe(0);
    expect(res.stderr).toBe(
      `Warning: ${join(home.dir, "config.yaml")}: mcp_servers.files.command: "npxx" was not found on PATH — the gateway starts, but every connect of this server fails: check command (and PATH)\n`,
    );
    expect(entry("files")).toEqual({ command: "npxx", args: ["-y", "@scope/server"] });
  });

  it("svc mcp import says the same of the entries it writes (a project's .mcp.json often names its server relatively)", async () => {
    home = tempHome();
    project = makeProject();
    const servers = {
      local: { command: "node", args: ["dist/index.js"] },
      typo: { command: "nodee", args: [] },
      pkg: { command: "npx", args: ["-y", "@scope/server"] },
    };
    writeFileSync(join(project, ".mcp.json"), JSON.stringify({ mcpServers: servers }));
    const res = await svcInProject(["mcp", "import", ".mcp.json"]);
    expect(res.code).toBe(0);
    expect(res.stderr).toBe(
      [
        `Note: mcp_servers.local: args[0] "dist/index.js" is a relative path, taken from the working directory of the gateway that starts the server, not from this one (${project}) — write it as ${join(project, "dist", "index.js")} (svc mcp add local --force -- …)`,
        `Warning: ${join(home.dir, "config.yaml")}: mcp_servers.typo.command: "nodee" was not found on PATH — the gateway starts, but every connect of this server fails: check command (and PATH)`,
        "",
      ].join("\n"),
    );
  });

  it("a whole command line written as command is said to be one (no path, no argument shown: one may be a key), with the fix", async () => {
    home = tempHome();
    project = makeProject();
    const servers = {
      ctx: { command: "npx -y @upstash/context7-mcp --api-key ctx7sk-SECRET", args: [] },
      gh: { command: "GITHUB_TOKEN=ghp_SECRET npx", args: ["-y", "@scope/server"] },
    };
    writeFileSync(join(project, ".mcp.json"), JSON.stringify({ mcpServers: servers }));
    const res = await svcInProject(["mcp", "import", ".mcp.json"]);
    expect(res.code).toBe(0);
    const config = join(home.dir, "config.yaml");
    expect(res.stderr).not.toContain("SECRET");
    expect(res.stderr).not.toContain("relative path");
    expect(res.stderr).toContain(
      `Warning: ${config}: mcp_servers.ctx.command: is a whole command line ("npx" and 4 more words), which is started as one program name, not split into words — the gateway starts, but every connect of this server fails: write the program alone as command and each other word as an item of args`,
    );
    expect(res.stderr).toContain(
      `Warning: ${config}: mcp_servers.gh.command: starts with GITHUB_TOKEN=..., how a shell sets a variable, and no shell runs command — the gateway starts, but every connect of this server fails: write the program alone as command and GITHUB_TOKEN under env (as \${GITHUB_TOKEN}, its value in .env)`,
    );
  });

  it("says nothing of a command on PATH with a package name, an option, an absolute path, or a bare word that only happens to name a directory here", async () => {
    home = tempHome();
    project = makeProject();
    const res = await svcInProject([
      "mcp",
      "add",
      "git",
      "--",
      "node",
      "--no-warnings",
      "mcp-server-git",
      "/srv/repo",
      "@scope/pkg",
    ]);
    expect(res.code).toBe(0);
    expect(res.stderr).toBe("");
    // A program whose path has a space in it is one program, not a command line.
    mkdirSync(join(project, "My Tools"));
    writeFileSync(join(project, "My Tools", "server"), "#!/bin/sh\n", { mode: 0o755 });
    const spaced = await svcInProject(["mcp", "add", "spaced", "--", join(project, "My Tools", "server")]);
    expect(spaced).toMatchObject({ code: 0, stderr: "" });
  });
});
