import { spawn } from "node:child_process";
import { chmodSync, chownSync, statSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { SVC_ARGV } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig } from "./svc.js";

/**
 * An edited config.yaml keeps its mode whatever the umask of the shell the command runs in: the new copy
 * was made with the kept mode minus the umask, so a group-writable 0660 file shared by two admins became
 * 0640 under umask 022, and a 0644 one 0600 under 077 (a gateway run as another user of the group could
 * no longer read it).
 */

let home: TempHome;
afterEach(() => home?.cleanup());

function svcUnderUmask(umask: string, args: readonly string[]): Promise<number | null> {
  const child = spawn(
    "bash",
    ["-c", `umask ${umask} && exec "$@"`, "bash", process.execPath, ...SVC_ARGV, ...args],
    { env: { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir }, stdio: "ignore" },
  );
  return new Promise((resolve) => child.on("exit", resolve));
}

describe("config.yaml edited under a umask", { timeout: 60_000 }, () => {
  it("svc mcp add keeps a 0644 file 0644 under umask 077", async () => {
    home = tempHome();
    const config = home.write("config.yaml", stringify(cliConfig()));
    chmodSync(config, 0o644);
    expect(await svcUnderUmask("077", ["mcp", "add", "files", "--", "node", "server.js"])).toBe(0);
    expect(statSync(config).mode & 0o777).toBe(0o644);
  });

  it("svc mcp remove keeps a group-writable 0660 file 0660 under umask 022", async () => {
    home = tempHome();
    const config = home.write(
      "config.yaml",
      stringify(cliConfig({}, { mcp_servers: { files: { command: "node", args: ["server.js"] } } })),
    );
    chmodSync(config, 0o660);
    expect(await svcUnderUmask("022", ["mcp", "remove", "files"])).toBe(0);
    expect(statSync(config).mode & 0o777).toBe(0o660);
  });
});

/**
 * A store of another user's SVC_HOME edited by root (`sudo svc webhook subscribe ...`) was replaced by a
 * root-owned 0600 copy, which the gateway running as that user could no longer read: its subscriptions
 * were gone at the next lookup, its config.yaml at the next reload.
 */
describe.runIf(process.getuid?.() === 0)(
  "a store of another user edited by root",
  { timeout: 60_000 },
  () => {
    it("keeps its owner and group (config.yaml by svc mcp add, the subscription store by svc webhook subscribe)", async () => {
      home = tempHome();
      const config = home.write("config.yaml", stringify(cliConfig()), 0o600);
      const store = home.write("webhook_subscriptions.json", "{}\n", 0o600);
      for (const file of [config, store]) chownSync(file, 65534, 65534);
      expect(await svcUnderUmask("077", ["mcp", "add", "files", "--", "node", "server.js"])).toBe(0);
      expect(await svcUnderUmask("077", ["webhook", "subscribe", "ci"])).toBe(0);
      for (const file of [config, store]) {
        const { uid, gid, mode } = statSync(file);
        expect([file, uid, gid, mode & 0o777]).toEqual([file, 65534, 65534, 0o600]);
      }
    });

    it("gives a store it makes new (svc cron create, svc webhook subscribe), and a directory made for it, to the owner of the home", async () => {
      home = tempHome();
      home.write("config.yaml", stringify(cliConfig()), 0o600);
      for (const path of [home.dir, `${home.dir}/config.yaml`]) chownSync(path, 65534, 65534);
      const args = ["cron", "create", "--name", "nightly", "--schedule", "every 1d", "--prompt", "hi"];
      expect(await svcUnderUmask("022", args)).toBe(0);
      expect(await svcUnderUmask("022", ["webhook", "subscribe", "ci"])).toBe(0);
      for (const [path, mode] of [
        [`${home.dir}/cron`, 0o700],
        [`${home.dir}/cron/jobs.json`, 0o600],
        [`${home.dir}/webhook_subscriptions.json`, 0o600],
      ] as const) {
        const { uid, gid, mode: written } = statSync(path);
        expect([path, uid, gid, written & 0o777]).toEqual([path, 65534, 65534, mode]);
      }
    });

    it("gives the log directory and file a command makes new (svc cron run) to the owner of the home (whose gateway could not start beside a root-owned logs/)", async () => {
      home = tempHome();
      home.write("config.yaml", stringify(cliConfig()), 0o600);
      for (const path of [home.dir, `${home.dir}/config.yaml`]) chownSync(path, 65534, 65534);
      const args = ["cron", "create", "--name", "nightly", "--schedule", "every 1d", "--prompt", "hi"];
      expect(await svcUnderUmask("022", args)).toBe(0);
      expect(await svcUnderUmask("022", ["cron", "run", "nightly"])).toBe(0);
      for (const [path, mode] of [
        [`${home.dir}/logs`, 0o700],
        [`${home.dir}/logs/gateway.log`, 0o600],
      ] as const) {
        const { uid, gid, mode: written } = statSync(path);
        expect([path, uid, gid, written & 0o777]).toEqual([path, 65534, 65534, mode]);
      }
    });
  },
);
