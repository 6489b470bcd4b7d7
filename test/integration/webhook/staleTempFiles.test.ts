import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import type { Gateway } from "../../../src/gateway/index.js";
import { pidNamespace } from "../../../src/io/pidNamespace.js";
import { startGatewayInHome, webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

/**
 * Stores are written atomically (temp file, fsync, rename), so a SIGKILL mid-write leaves the store
 * whole, plus the half-written temp file beside it. The next start removes those of processes that
 * are gone, and leaves another running process's (a CLI command writing now) alone.
 */

let home: TempHome | undefined;
let gateway: Gateway | undefined;
let dotfiles: string | undefined;
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  await gateway?.stop();
  gateway = undefined;
  home?.cleanup();
  if (dotfiles !== undefined) rmSync(dotfiles, { recursive: true, force: true });
  dotfiles = undefined;
});

describe("temp files of atomic writes cut short", () => {
  it("are removed at start when their process is gone; a live process's is kept", async () => {
    const writing = spawn("sleep", ["30"]);
    children.push(writing);
    home = tempHome();
    home.write(
      "config.yaml",
      stringify(webhookConfig({ open: { secret: "INSECURE_NO_AUTH" } }, {}, { agent: { provider: "echo" } })),
    );
    const gone = spawnSync("true").pid;
    const stale = [
      `.webhook-pending-runs.json.${gone}.0123456789ab.tmp`,
      `.webhook-seen-ids.json.${gone}.a1b2c3d4e5f6.tmp`,
      join("cron", `.jobs.json.${gone}.00ff00ff00ff.tmp`),
    ];
    for (const name of stale) home.write(name, '{"version": 1, "ru');
    const live = `.webhook_subscriptions.json.${writing.pid}.abcdefabcdef.tmp`;
    home.write(live, "{");
    home.write("notes.tmp", "mine");

    gateway = await startGatewayInHome(home);
    for (const name of stale) expect([name, existsSync(join(home.dir, name))]).toEqual([name, false]);
    expect(existsSync(join(home.dir, live))).toBe(true);
    expect(existsSync(join(home.dir, "notes.tmp"))).toBe(true);
  });

  it("beside the target of a symlinked store file (dotfiles), only that target's; in named profiles, mcp-cache, mcp-tokens and sessions", async () => {
    home = tempHome();
    const writing = spawn("sleep", ["30"]);
    children.push(writing);
    const elsewhere = mkdtempSync(join(tmpdir(), "svc-dotfiles-"));
    dotfiles = elsewhere;
    const config = stringify(
      webhookConfig({ open: { secret: "INSECURE_NO_AUTH" } }, {}, { agent: { provider: "echo" } }),
    );
    writeFileSync(join(elsewhere, "svc-config.yaml"), config);
    writeFileSync(join(elsewhere, "svc.env"), "A=1\n");
    symlinkSync(join(elsewhere, "svc-config.yaml"), join(home.dir, "config.yaml"));
    symlinkSync(join(elsewhere, "svc.env"), join(home.dir, ".env"));
    home.write("profiles/work/cron/jobs.json", '{"version": 1, "jobs": []}');
    const gone = spawnSync("true").pid;
    const stale = [
      join(elsewhere, `.svc-config.yaml.${gone}.0123456789ab.tmp`),
      join(elsewhere, `.svc.env.${gone}.a1b2c3d4e5f6.tmp`),
      // The lock of a symlinked store is beside its target, and so are its own files.
      join(elsewhere, `svc-config.yaml.lock.${gone}.0a1b2c3d.new`),
      join(elsewhere, `svc.env.lock.${gone}.deadbeef.stale`),
      join(home.dir, "profiles", "work", "cron", `.jobs.json.${gone}.00ff00ff00ff.tmp`),
      home.write(`mcp-cache/.status.json.${gone}.0a0b0c0d0e0f.tmp`, "{"),
      home.write(`profiles/work/mcp-tokens/.docs.json.${gone}.0f0e0d0c0b0a.tmp`, "{"),
      home.write(`sessions/.index.json.${gone}.1a2b3c4d5e6f.tmp`, "{"),
      home.write(`profiles/work/sessions/.index.json.${gone}.6f5e4d3c2b1a.tmp`, "{"),
    ];
    // Not svc's directory: another program's temp file of the same shape, and a live write, stay.
    const kept = [
      join(elsewhere, `.zshrc.${gone}.0123456789ab.tmp`),
      join(elsewhere, `zshrc.lock.${gone}.0a1b2c3d.new`),
      join(elsewhere, `.svc-config.yaml.${writing.pid}.abcdefabcdef.tmp`),
    ];
    for (const path of [...stale, ...kept]) writeFileSync(path, "half");

    gateway = await startGatewayInHome(home);
    for (const path of stale) expect([path, existsSync(path)]).toEqual([path, false]);
    for (const path of kept) expect([path, existsSync(path)]).toEqual([path, true]);
  });

  it("a lock's own leftovers (made whole before it is linked into place, moved aside when taken over) of a process that is gone are removed; a live one's stay", async () => {
    home = tempHome();
    const writing = spawn("sleep", ["30"]);
    children.push(writing);
    home.write(
      "config.yaml",
      stringify(webhookConfig({ open: { secret: "INSECURE_NO_AUTH" } }, {}, { agent: { provider: "echo" } })),
    );
    const gone = spawnSync("true").pid;
    const stale = [
      home.write(`webhook_subscriptions.json.lock.${gone}.0a1b2c3d.new`, `${gone} - 00ff`),
      home.write(`config.yaml.lock.${gone}.deadbeef.stale`, "1 - 00ff"),
      home.write(`gateway.pid.${gone}.12345678.new`, `${gone}\n`),
      home.write(`cron/jobs.json.lock.${gone}.abcdef01.new`, `${gone} - 00ff`),
      home.write(`profiles/work/sessions/index.json.lock.${gone}.00112233.stale`, "1 - 00ff"),
    ];
    const kept = [
      home.write(`webhook_subscriptions.json.lock.${writing.pid}.0a1b2c3d.new`, `${writing.pid} - 00ff`),
      home.write(`notes.${gone}.0a1b2c3d.new`, "mine"),
    ];
    gateway = await startGatewayInHome(home);
    for (const path of stale) expect([path, existsSync(path)]).toEqual([path, false]);
    for (const path of kept) expect([path, existsSync(path)]).toEqual([path, true]);
  });

  it.runIf(pidNamespace() !== undefined)(
    "another PID namespace's (a command in a container sharing SVC_HOME with the host) are judged by their age, not by a pid that runs nowhere here: kept while written to within the hour",
    async () => {
      home = tempHome();
      home.write(
        "config.yaml",
        stringify(
          webhookConfig({ open: { secret: "INSECURE_NO_AUTH" } }, {}, { agent: { provider: "echo" } }),
        ),
      );
      const here = /\d+/.exec(pidNamespace() as string)?.[0] as string;
      const elsewhere = here === "1" ? "2" : "1";
      const gone = spawnSync("true").pid;
      const writing = [
        home.write(`.webhook_subscriptions.json.${gone}.ns${elsewhere}.0123456789ab.tmp`, "{"),
        home.write(`webhook_subscriptions.json.lock.${gone}.ns${elsewhere}.0a1b2c3d.new`, `${gone} - 00ff`),
      ];
      const left = [
        home.write(`.webhook-seen-ids.json.${gone}.ns${elsewhere}.a1b2c3d4e5f6.tmp`, "{"),
        home.write(`cron/jobs.json.lock.${gone}.ns${elsewhere}.abcdef01.stale`, `${gone} - 00ff`),
      ];
      const hourAgo = new Date(Date.now() - 3_660_000);
      for (const path of left) utimesSync(path, hourAgo, hourAgo);
      // Named with this namespace: judged by the pid, as before.
      const ours = [
        home.write(`.webhook-pending-runs.json.${gone}.ns${here}.0123456789ab.tmp`, "{"),
        home.write(`config.yaml.lock.${gone}.ns${here}.deadbeef.stale`, "1 - 00ff"),
      ];
      gateway = await startGatewayInHome(home);
      for (const path of writing) expect([path, existsSync(path)]).toEqual([path, true]);
      for (const path of [...left, ...ours]) expect([path, existsSync(path)]).toEqual([path, false]);
    },
  );

  it("one named with the gateway's own pid was left by an earlier process under that pid (a container's pid 1): removed", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify(webhookConfig({ open: { secret: "INSECURE_NO_AUTH" } }, {}, { agent: { provider: "echo" } })),
    );
    const stale = [
      home.write(`.webhook-pending-runs.json.${process.pid}.0123456789ab.tmp`, '{"version": 1, "ru'),
      home.write(`sessions/.index.json.${process.pid}.a1b2c3d4e5f6.tmp`, "{"),
    ];
    gateway = await startGatewayInHome(home);
    for (const path of stale) expect([path, existsSync(path)]).toEqual([path, false]);
  });

  it("a profiles entry that is not a directory does not stop the start; SVC_HOME is still cleaned", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify(webhookConfig({ open: { secret: "INSECURE_NO_AUTH" } }, {}, { agent: { provider: "echo" } })),
    );
    home.write("profiles", "not a directory");
    const stale = home.write(`.webhook-seen-ids.json.${spawnSync("true").pid}.a1b2c3d4e5f6.tmp`, "{");
    gateway = await startGatewayInHome(home);
    expect(existsSync(stale)).toBe(false);
  });
});
