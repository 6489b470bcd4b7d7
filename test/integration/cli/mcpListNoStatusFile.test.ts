import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { runInProcess } from "../../helpers/inProcessCli.js";

let home: TempHome;
let gateway: ChildProcess | undefined;
afterEach(() => {
  gateway?.kill("SIGKILL");
  gateway = undefined;
  home.cleanup();
});

describe("svc mcp list with a gateway running but no status file of it", () => {
  it("says in a note that the live status cannot be shown and why, instead of silently showing the offline view", async () => {
    home = tempHome();
    home.write("config.yaml", stringify({ mcp_servers: { off: { command: "true", enabled: false } } }));
    // A process that passes for this home's gateway (its command line says gateway, its SVC_HOME is the home).
    gateway = spawn(process.execPath, ["-e", "setInterval(() => {}, 60000)", "gateway"], {
      env: { SVC_HOME: home.dir, PATH: process.env.PATH ?? "" },
      stdio: "ignore",
    });
    await once(gateway, "spawn");
    home.write("gateway.pid", `${gateway.pid}\n`);
    const status = join(home.dir, "mcp-cache", "status.json");
    const list = (...args: string[]) =>
      runInProcess(["mcp", "list", ...args], { SVC_HOME: home.dir, PATH: process.env.PATH ?? "" });

    const missing = await list("--no-check");
    expect(missing.code).toBe(0);
    expect(missing.stderr).toBe(
      `Note: a gateway is running (pid ${gateway.pid}), but ${status} is missing, so its live status cannot be shown: below is the configuration-only view — svc mcp reload writes the status file again\n`,
    );
    expect(missing.stdout).toContain(
      "(not the running gateway's status: states are from the configuration, tool counts from the schema cache)\n",
    );

    home.write("mcp-cache/status.json", JSON.stringify({ pid: 1, updatedAt: "", servers: [] }));
    const other = await list();
    expect(other.stderr).toContain(
      `was written by pid 1, so its live status cannot be shown: below is each server checked as with no gateway running — `,
    );
    expect(other.stdout).toMatch(/^off\s+stdio\s+skipped \(enabled: false\)$/m);

    // JSON of another shape (edited by hand) is a file that cannot be read, not a TypeError.
    for (const body of ["null", JSON.stringify({ pid: gateway.pid, updatedAt: "", servers: null })]) {
      home.write("mcp-cache/status.json", body);
      const odd = await list("--no-check");
      expect(odd.code).toBe(0);
      expect(odd.stderr).toBe(
        `Note: a gateway is running (pid ${gateway.pid}), but ${status} cannot be read, so its live status cannot be shown: below is the configuration-only view — svc mcp reload writes the status file again\n`,
      );
      expect(odd.stdout).toMatch(/^off\s+stdio\s+skipped\s/m);
    }

    // A file where the status file's directory goes: named as such, not as a missing status file.
    rmSync(join(home.dir, "mcp-cache"), { recursive: true });
    home.write("mcp-cache", "");
    const inTheWay = await list("--no-check");
    expect(inTheWay.stderr).toBe(
      `Note: a gateway is running (pid ${gateway.pid}), but ${join(home.dir, "mcp-cache")} is a file, not a directory (move it away: the gateway makes the directory and writes ${status} in it), so its live status cannot be shown: below is the configuration-only view — once it is moved away, svc mcp reload writes the status file again (as the gateway does by itself within 5 s once a write of it has failed)\n`,
    );

    // Seen: "… is a file, not a directory (move it away: …)" of mcp-cache -> /dev/null, while the gateway's log
    // names the link: a device is no file to move.
    rmSync(join(home.dir, "mcp-cache"));
    symlinkSync("/dev/null", join(home.dir, "mcp-cache"));
    const device = await list("--no-check");
    expect(device.stderr).toBe(
      `Note: a gateway is running (pid ${gateway.pid}), but ${join(home.dir, "mcp-cache")} is a symbolic link to /dev/null, which is a device, not a directory (point the link at a directory, or remove the link: the gateway makes the directory and writes ${status} in it), so its live status cannot be shown: below is the configuration-only view — once the link leads to a directory or is removed, svc mcp reload writes the status file again (as the gateway does by itself within 5 s once a write of it has failed)\n`,
    );

    // Seen: "… is missing … — svc mcp reload writes the status file again" of a link to nothing, which no reload writes through.
    rmSync(join(home.dir, "mcp-cache"));
    symlinkSync(join(home.dir, "gone"), join(home.dir, "mcp-cache"));
    const nowhere = await list("--no-check");
    expect(nowhere.stderr).toBe(
      `Note: a gateway is running (pid ${gateway.pid}), but ${join(home.dir, "mcp-cache")} is a symbolic link to ${join(home.dir, "gone")}, which does not exist (create that directory, or remove the link: the gateway makes the directory and writes ${status} in it), so its live status cannot be shown: below is the configuration-only view — once the link leads to a directory or is removed, svc mcp reload writes the status file again (as the gateway does by itself within 5 s once a write of it has failed)\n`,
    );
  });
});

/**
 * Seen: with mcp-cache linked to /dev/null, `svc mcp reload` waited its whole --wait and said the gateway "has not
 * reported the reload within 10 s: it may still be reloading, or be stuck", though the gateway's log said
 * "configuration reloaded": it cannot write status.json, so no report ever comes.
 */
describe("svc mcp reload with something other than a directory in mcp-cache's place", () => {
  it("says at once, after the signal, what is in the way and that the log tells whether the reload applied (exit 1)", async () => {
    home = tempHome();
    home.write("config.yaml", stringify({ mcp_servers: { off: { command: "true", enabled: false } } }));
    // A process that passes for this home's gateway and takes SIGHUP, as the gateway does.
    gateway = spawn(
      process.execPath,
      [
        "-e",
        "process.on('SIGHUP', () => {}); process.stdout.write('ready'); setInterval(() => {}, 60000)",
        "gateway",
      ],
      { env: { SVC_HOME: home.dir, PATH: process.env.PATH ?? "" }, stdio: ["ignore", "pipe", "ignore"] },
    );
    // Signalled only once it takes SIGHUP (before, the signal would end it).
    await once(gateway.stdout as NodeJS.ReadableStream, "data");
    home.write("gateway.pid", `${gateway.pid}\n`);
    const cache = join(home.dir, "mcp-cache");
    const status = join(cache, "status.json");
    const log = join(home.dir, "logs", "gateway.log");
    const cases: [stage: () => void, said: string][] = [
      [
        () => home.write("mcp-cache", ""),
        `${cache} is a file, not a directory (move it away: the gateway makes the directory and writes ${status} in it)`,
      ],
      [
        () => symlinkSync("/dev/null", cache),
        `${cache} is a symbolic link to /dev/null, which is a device, not a directory (point the link at a directory, or remove the link: the gateway makes the directory and writes ${status} in it)`,
      ],
      [
        () => symlinkSync(join(home.dir, "gone"), cache),
        `${cache} is a symbolic link to ${join(home.dir, "gone")}, which does not exist (create that directory, or remove the link: the gateway makes the directory and writes ${status} in it)`,
      ],
      [
        () => {
          symlinkSync(join(home.dir, "other"), cache);
          symlinkSync(cache, join(home.dir, "other"));
        },
        `${cache} is a symbolic link into a loop of links, or a chain of more than 40 (point the link at a directory, or remove the link: the gateway makes the directory and writes ${status} in it)`,
      ],
    ];
    for (const [stage, said] of cases) {
      rmSync(cache, { recursive: true, force: true });
      stage();
      // --wait 1: without the check the command would wait it out and say the gateway may be stuck.
      const reload = await runInProcess(["mcp", "reload", "--wait", "1"], {
        SVC_HOME: home.dir,
        PATH: process.env.PATH ?? "",
      });
      expect(reload).toMatchObject({
        code: 1,
        stdout: "",
        stderr: `svc: sent SIGHUP to the gateway (pid ${gateway.pid}), but it cannot report the reload: ${said} — its log says whether the reload applied (${log})\n`,
      });
    }
    expect(gateway.exitCode).toBeNull();
  });
});

describe("svc mcp list with a gateway running and a config.yaml that cannot be loaded", () => {
  it("shows the gateway's live status, then the problem and that the gateway keeps its config (exit 1)", async () => {
    home = tempHome();
    home.write("config.yaml", "mcp_servers:\n  fx: {command: x\n");
    gateway = spawn(process.execPath, ["-e", "setInterval(() => {}, 60000)", "gateway"], {
      env: { SVC_HOME: home.dir, PATH: process.env.PATH ?? "" },
      stdio: "ignore",
    });
    await once(gateway, "spawn");
    home.write("gateway.pid", `${gateway.pid}\n`);
    const fx = {
      name: "fx",
      transport: "stdio",
      state: "connected",
      toolCount: 3,
      lazy: false,
      cached: true,
    };
    home.write(
      "mcp-cache/status.json",
      JSON.stringify({ pid: gateway.pid, updatedAt: "", servers: [{ ...fx, collisions: [] }] }),
    );

    for (const args of [[], ["--no-check"]]) {
      const list = await runInProcess(["mcp", "list", ...args], {
        SVC_HOME: home.dir,
        PATH: process.env.PATH ?? "",
      });
      expect(list.stdout).toMatch(/^NAME\s+TRANSPORT\s+STATE/);
      expect(list.stdout).toMatch(/^fx\s+stdio\s+connected\s+3\s+no\s+yes/m);
      expect(list.stderr).toMatch(new RegExp(`^svc: ${join(home.dir, "config.yaml")}: `));
      expect(list.stderr).toContain(
        `\nNote: the gateway (pid ${gateway.pid}) keeps the config it loaded — above is its live status; fix config.yaml before its next reload or start\n`,
      );
      expect(list.code).toBe(1);
    }
  });
});
