import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { pidNamespace } from "../../../src/io/pidNamespace.js";
import { LOCK_FILE } from "../../../src/io/state/journal/dirLock.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, svc } from "./svc.js";

/**
 * `svc gateway start` where the state directory's LOCK names a gateway of another PID namespace (a
 * container restarted after its gateway was killed): the gateway it spawns watches that lock for up to
 * 15 s before it takes it over, as long as start's own default wait for /health, so start gave up on a
 * gateway that came up moments later ("did not answer /health within 15s, so it was stopped"). It now
 * gives the gateway the time of each lock wait the gateway says it makes.
 */

let home: TempHome | undefined;
afterEach(async () => {
  if (home === undefined) return;
  await svc(home, ["gateway", "stop"]);
  home.cleanup();
  home = undefined;
});

describe.runIf(pidNamespace() !== undefined)(
  "svc gateway start beside a foreign state LOCK",
  { timeout: 120_000 },
  () => {
    it("waits out the gateway's lock wait and reports the gateway started", async () => {
      home = tempHome();
      home.write("config.yaml", stringify(cliConfig()));
      const dir = join(home.dir, "state");
      mkdirSync(dir, { recursive: true });
      // Left by a gateway of another namespace (a pid that runs nowhere here), touched just now.
      const pid = spawnSync("true").pid as number;
      const lock = join(dir, LOCK_FILE);
      writeFileSync(lock, `${pid} 12345 their-token pid:[4026530000]\n`, { mode: 0o600 });
      const res = await svc(home, ["gateway", "start"]);
      const out = readFileSync(join(home.dir, "logs", "gateway.out"), "utf8");
      expect(res.stderr, out).toBe("");
      expect(res.code).toBe(0);
      expect(res.stdout).toMatch(/^Gateway started: pid \d+, listening on /);
      expect(out).toMatch(
        new RegExp(
          `\\[state\\] ${lock} names a gateway of another PID namespace .*: waiting up to 15 s for it`,
        ),
      );
      expect(readFileSync(lock, "utf8")).toMatch(/^\d+ \S+ \S+ pid:\[\d+\]\n$/);
      expect(readFileSync(lock, "utf8")).not.toContain("their-token");
    });
  },
);
