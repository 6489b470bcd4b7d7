import { existsSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { pidNamespace } from "../../../src/io/pidNamespace.js";
import { LOCK_FILE, StateDirBusyError } from "../../../src/io/state/journal/dirLock.js";
import { Journal } from "../../../src/io/state/journal/journal.js";
import { FOREIGN_UNTOUCHED_MS } from "../../../src/io/stores/fileLock.js";
import { type Contained, inContainer, killContainers, UNSHARE } from "../../helpers/container.js";
import { inHome, webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { deliverSigned } from "../../helpers/http.js";
import { type SteppedClock, steppedClock } from "../../helpers/steppedClock.js";

/**
 * A gateway in a container whose SVC_HOME is a volume, killed (an OOM kill, `docker kill`) and started
 * again: the restart is a new PID namespace (`unshare --pid` stands in for it), where the killed gateway's
 * gateway.pid and state/LOCK name a pid of a namespace that no longer exists. Both were refused as a
 * gateway "of another PID namespace" until the user removed them by hand, so `restart: always` never
 * brought it back. A gateway now touches both every 5 s for its whole life; left untouched for 15 s they
 * are a killed gateway's and are taken over, while a live gateway of another namespace is still refused.
 */

const SECRET = "container-restart-secret";

let home: TempHome | undefined;
afterEach(async () => {
  await killContainers();
  home?.cleanup();
});

/** The port of its `Listening on` line, once logged. */
async function listening(gateway: Contained): Promise<number> {
  let port = 0;
  await vi.waitFor(
    () => {
      const match = /Listening on 127\.0\.0\.1:(\d+)/.exec(gateway.output());
      expect(match, gateway.output()).not.toBeNull();
      port = Number(match?.[1]);
    },
    { timeout: 60_000, interval: 50 },
  );
  return port;
}

/** The file's time set back as if untouched for `ms` (rather than waiting that long). */
function untouchedFor(file: string, ms: number): void {
  const at = new Date(Date.now() - ms);
  utimesSync(file, at, at);
}

/** Until the gateway's heartbeat touched `file` again after it was set back. */
async function touchedAgain(file: string): Promise<void> {
  untouchedFor(file, FOREIGN_UNTOUCHED_MS + 5000);
  const setBack = statSync(file).mtimeMs;
  await vi.waitFor(() => expect(statSync(file).mtimeMs).toBeGreaterThan(setBack), {
    timeout: 20_000,
    interval: 50,
  });
}

/**
 * Until `gateway`, watching gateway.pid (after state/LOCK, and its /health: a read of its clock for each
 * file, a look every 1 s or, when /health gives no answer, 2 s), has read `clock` three times since its last
 * step: the look after the first whole one on the step has begun, a second after that one judged (or until
 * it says it took them over, or fails). Stepped at once after a line the gateway printed, the step comes
 * between two looks. Its own clock goes on meanwhile: 2-3 s of it by then.
 */
async function lookedOnStep(gateway: Contained, clock: SteppedClock): Promise<void> {
  await vi.waitFor(
    () => {
      if (!/removed it|svc: /.test(gateway.output()))
        expect(clock.readsSinceStep()).toBeGreaterThanOrEqual(3);
    },
    { timeout: 30_000, interval: 50 },
  );
}

function writeConfig(dir: string): void {
  // A command agent whose first run hangs (the kill comes while it runs); its rerun appends its id.
  const agent = {
    provider: "command",
    command: [
      "sh",
      "-c",
      `if [ ! -e "$0/first" ]; then : > "$0/first"; sleep 600; fi; printf "%s\\n" "$SVC_DELIVERY_ID" >> "$0/runs.log"`,
      inHome(""),
    ],
  };
  writeFileSync(
    join(dir, "config.yaml"),
    stringify(webhookConfig({ pr: { secret: SECRET, prompt: "PR {number}" } }, { port: 0 }, { agent })),
    { mode: 0o600 },
  );
}

describe.runIf(UNSHARE && pidNamespace() !== undefined)(
  "a gateway killed in a container and started again in a new PID namespace",
  { timeout: 150_000 },
  () => {
    it("starts, taking over gateway.pid and the journal its killed run left once untouched (the journal's watched beside it, with no second wait), and reruns what was accepted", async () => {
      home = tempHome();
      const dir = home.dir;
      writeConfig(dir);
      const first = inContainer(dir, ["gateway", "run", "--port", "0"]);
      const port = await listening(first);
      const answer = await deliverSigned(port, "pr", "kept-1", SECRET);
      expect(answer).toMatchObject({ status: 202 });
      await vi.waitFor(() => expect(existsSync(join(dir, "first"))).toBe(true), {
        timeout: 30_000,
        interval: 50,
      });
      // docker kill: the namespace goes with its first process, the gateway and its agent with it.
      await first.kill();
      const pidFile = join(dir, "gateway.pid");
      const lock = join(dir, "state", LOCK_FILE);
      expect(existsSync(pidFile)).toBe(true);
      const leftLock = readFileSync(lock, "utf8");
      expect(leftLock.trim().split(" ")[3]).not.toBe(pidNamespace());

      // The restart, seconds later: gateway.pid set back past the bound, the lock as if touched 5 s ago.
      untouchedFor(pidFile, FOREIGN_UNTOUCHED_MS + 1000);
      untouchedFor(lock, 5000);
      // Its monotonic clock stepped past the bound once it watches gateway.pid, rather than waiting 15 s.
      const clock = steppedClock();
      const restarted = inContainer(dir, ["gateway", "run", "--port", "0"], clock);
      await vi.waitFor(
        () =>
          expect(restarted.output()).toMatch(/\[gateway\] .* which does not answer \/health: waiting up to /),
        { timeout: 60_000, interval: 50 },
      );
      // Short of the bound by 5 s, of which its own clock spends 2-3 while the test waits for a whole look on
      // the step: still watched then (at 11-12 s), not taken over.
      clock.step(FOREIGN_UNTOUCHED_MS - 5000);
      await lookedOnStep(restarted, clock);
      expect(restarted.output()).not.toMatch(/removed it|Listening on/);
      clock.step(5000);
      const newPort = await listening(restarted);
      const out = restarted.output();
      expect(out).toMatch(
        new RegExp(
          `\\[gateway\\] ${pidFile} named pid \\d+ of another PID namespace \\(pid:\\[\\d+\\]; this command runs in pid:\\[\\d+\\]\\), untouched for 1\\d\\.\\d s while this command watched it \\(a running gateway touches it every 5 s\\) and not answering /health: left by a gateway killed there \\(its container stopped or restarted\\) — removed it and ${join(dir, "gateway.json")}, starting`,
        ),
      );
      // Watched while gateway.pid was, the lock is taken over at once: no second 15 s watch.
      expect(out).not.toMatch(/\[state\] .* waiting up to/);
      expect(readFileSync(lock, "utf8")).not.toBe(leftLock);
      // The event accepted before the kill runs again, once.
      await vi.waitFor(() => expect(readFileSync(join(dir, "runs.log"), "utf8")).toBe("kept-1\n"), {
        timeout: 30_000,
        interval: 100,
      });
      expect(await deliverSigned(newPort, "pr", "after-restart", SECRET)).toMatchObject({ status: 202 });
      // unshare --fork ignores SIGTERM while it waits for its child: killed as the container is.
      await restarted.kill();
    });

    it("a live gateway of another namespace touches gateway.pid and its lock: a start beside it that cannot reach its /health, and the journal, are refused", async () => {
      home = tempHome();
      const dir = home.dir;
      writeConfig(dir);
      const live = inContainer(dir, ["gateway", "run", "--port", "0"]);
      await listening(live);
      const pidFile = join(dir, "gateway.pid");
      const lock = join(dir, "state", LOCK_FILE);
      const stateFile = join(dir, "gateway.json");
      const written = readFileSync(pidFile, "utf8");
      // Its address unreachable from here (another network): only the heartbeat tells it runs.
      const recorded = JSON.parse(readFileSync(stateFile, "utf8")) as Record<string, unknown>;
      writeFileSync(stateFile, JSON.stringify({ ...recorded, port: 9 }));

      // Set back as if untouched: its heartbeat touches both again (watched at once: one beat touches both).
      await Promise.all([touchedAgain(pidFile), touchedAgain(lock)]);
      let refused: unknown;
      try {
        new Journal(
          { dir: join(dir, "state") },
          () => {},
          () => [],
        );
      } catch (err) {
        refused = err;
      }
      expect(refused).toBeInstanceOf(StateDirBusyError);

      const beside = inContainer(dir, ["gateway", "run", "--port", "0"]);
      expect(await beside.exited).toBe(2);
      expect(beside.output()).toMatch(
        new RegExp(
          `\\[gateway\\] ${pidFile} names pid \\d+ of another PID namespace .*, which does not answer /health: waiting up to \\d+ s for it to stay untouched for 15 s[^\\n]*\\nsvc: a gateway already runs on this SVC_HOME: ${pidFile} names pid \\d+ of another PID namespace \\(pid:\\[\\d+\\]; this command runs in pid:\\[\\d+\\]\\), and that gateway touched it while this command watched it, \\d+\\.\\d s ago by this command's clock \\(a running gateway touches it every 5 s; one left untouched for 15 s is taken for a killed gateway's\\) — stop it where it was started`,
        ),
      );
      expect(readFileSync(pidFile, "utf8")).toBe(written);
      expect(live.child.exitCode).toBeNull();
    });
  },
);
