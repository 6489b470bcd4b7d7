import type { ChildProcess } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { startCliGateway } from "../../helpers/cliGateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig } from "./svc.js";

/**
 * `npm start` in production: a supervisor's SIGTERM goes to npm and its shell, not to svc. The start now
 * says so (INFO) when npm started it (npm sets npm_lifecycle_event for the script it runs).
 */

const children: ChildProcess[] = [];
let home: TempHome;
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  home.cleanup();
});

const NOTE =
  'INFO [gateway] running under npm (npm run start): a supervisor\'s stop signal goes to npm and the shell it started, not to svc, so the graceful stop may be cut short or never begin — in production run svc gateway run itself (systemd: ExecStart=/path/to/svc gateway run; docker: CMD ["svc", "gateway", "run"])';

describe("svc gateway run started by npm", { timeout: 30_000 }, () => {
  it("says so once at start (INFO: trying svc out is what npm start is for), naming npm's script and what to run instead", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig({ a: { secret: "s" } })), 0o600);
    const gateway = await startCliGateway(home, children, { npm_lifecycle_event: "start" });
    gateway.child.kill("SIGTERM");
    expect(await gateway.exited).toBe(0);
    expect(gateway.output().split(NOTE)).toHaveLength(2);
  });

  it("says nothing of npm when started without it", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig({ a: { secret: "s" } })), 0o600);
    const gateway = await startCliGateway(home, children);
    gateway.child.kill("SIGTERM");
    expect(await gateway.exited).toBe(0);
    expect(gateway.output()).not.toContain("npm");
  });
});
