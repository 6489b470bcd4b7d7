import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { pidNamespace } from "../../../src/io/pidNamespace.js";
import { closedPort } from "../../helpers/closedPort.js";
import { heldAtStart, killHeld } from "../../helpers/heldAtStart.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc, webhookOnPort } from "./svc.js";

/**
 * `svc gateway status`, in the gateway's own PID namespace, while that gateway still starts (waiting for a
 * state/LOCK of another namespace, up to 15 s, or for a Redis loading its data): its gateway.json holds only
 * its claim ({pid, pid_namespace}), which status read as a record that "cannot be read" (port 0 and --port:
 * `Listening: unknown — … cannot be read …`, exit 1) or, on a fixed port, as a gateway not answering there
 * (exit 1), where a command of another namespace said it is still starting (exit 4).
 */

const children: ChildProcess[] = [];
let home: TempHome | undefined;
afterEach(async () => {
  await killHeld(children);
  home?.cleanup();
  home = undefined;
});

describe.runIf(pidNamespace() !== undefined)(
  "svc gateway status of a gateway still starting, in its own PID namespace",
  { timeout: 60_000 },
  () => {
    it.each([
      { what: "on a port it picks (port: 0)", port: () => Promise.resolve(0), args: [] },
      { what: "started with --port", port: () => Promise.resolve(0), args: ["--port", "0"] },
      { what: "on a fixed port, where nothing listens yet", port: closedPort, args: [] },
    ])("$what: says it has not recorded where it listens yet (exit 4)", async ({ port, args }) => {
      home = tempHome();
      home.write("config.yaml", webhookOnPort(await port()), 0o600);
      const gateway = await heldAtStart(home, args, children);
      const stateFile = join(home.dir, "gateway.json");
      // Its claim alone: the rest is written once it listens.
      expect(JSON.parse(readFileSync(stateFile, "utf8"))).toEqual({
        pid: gateway.pid,
        pid_namespace: pidNamespace(),
      });

      const status = await svc(home, ["gateway", "status"]);
      expect(status.stdout).toBe(
        `Gateway: running (pid ${gateway.pid}), still starting\nListening: not recorded yet\nHealth: not asked — the gateway has not recorded in ${stateFile} where it listens yet, as it does once it listens: it is still starting (waiting for the state directory's lock, or for Redis to load its data)\n`,
      );
      expect(status.code).toBe(4);
      // Kept: it names a gateway that runs.
      expect(readFileSync(join(home.dir, "gateway.pid"), "utf8")).toBe(`${gateway.pid}\n`);
    });
  },
);
