import type { ChildProcess } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { pidNamespace } from "../../../src/io/pidNamespace.js";
import { heldAtStart, killHeld } from "../../helpers/heldAtStart.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc, webhookOnPort } from "./svc.js";

/**
 * `svc mcp reload` of a gateway still starting (held by a state/LOCK of another PID namespace, or by a Redis
 * loading its data): the gateway takes the SIGHUP and reloads once its start is done, but the command
 * waited its --wait for a report and said "it has not reported the reload within 10 s (--wait): it may
 * still be reloading, or be stuck" (exit 1). It says the gateway is still starting, as svc gateway status
 * does (exit 4).
 */

const children: ChildProcess[] = [];
let home: TempHome | undefined;
afterEach(async () => {
  await killHeld(children);
  home?.cleanup();
  home = undefined;
});

describe.runIf(pidNamespace() !== undefined)(
  "svc mcp reload of a gateway still starting",
  { timeout: 60_000 },
  () => {
    it("sends the signal and says at once that the gateway applies it once started (exit 4), not that it may be stuck", async () => {
      home = tempHome();
      home.write("config.yaml", webhookOnPort(0), 0o600);
      const gateway = await heldAtStart(home, [], children);
      let exited = false;
      gateway.once("exit", () => {
        exited = true;
      });
      const reload = await svc(home, ["mcp", "reload", "--wait", "2"]);
      expect(reload.stdout).toBe("");
      expect(reload.stderr).toBe(
        `svc: sent SIGHUP to the gateway (pid ${gateway.pid}), which is still starting: the gateway has not recorded in ${join(home.dir, "gateway.json")} where it listens yet, as it does once it listens: it is still starting (waiting for the state directory's lock, or for Redis to load its data) — it applies the reload once its start is done (reading ${join(home.dir, "config.yaml")} as it is then), and its log says how it went (${join(home.dir, "logs", "gateway.log")}); svc gateway status says when it has started, and svc mcp list then shows the servers it runs\n`,
      );
      expect(reload.code).toBe(4);
      // The signal is taken, not fatal: the gateway still waits at its start.
      expect(exited).toBe(false);
      expect((await svc(home, ["gateway", "status"])).code).toBe(4);
    });
  },
);
