import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { pidNamespace } from "../../../src/io/pidNamespace.js";
import { LOCK_FILE } from "../../../src/io/state/journal/dirLock.js";
import { FOREIGN_UNTOUCHED_MS } from "../../../src/io/stores/fileLock.js";
import { type Contained, hostPid, inContainer, killContainers, UNSHARE } from "../../helpers/container.js";
import { type HealthImpostor, healthImpostor } from "../../helpers/healthImpostor.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { signalProcess } from "../../helpers/process.js";
import { type SteppedClock, steppedClock } from "../../helpers/steppedClock.js";
import { cliConfig, svc } from "./svc.js";

/**
 * A gateway in a container sharing SVC_HOME with the host (`unshare --pid` stands in for the container):
 * gateway.pid holds its pid alone, a pid of its PID namespace. A command of another namespace learned that
 * namespace only from gateway.json, which the gateway wrote once it listened: until then (while it waited
 * for a state/LOCK of another namespace, or for a Redis loading its data) `svc gateway status` on the host
 * judged the pid as one of its own (the host's pid 1 is no gateway), removed gateway.pid as stale and said
 * "not running", and `svc gateway start` then started a second gateway.
 *
 * A gateway paused or hung for 15 s where another namespace's start could not check its pid is taken over:
 * that start rewrote gateway.pid and gateway.json, and the first one, run again, logs an ERROR saying to stop
 * it. Stopped so, it wrote its own record over the other's (stopping_since) and removed gateway.pid and
 * gateway.json, judging them by their pid alone, which in two containers is the same (pid 1): `svc gateway
 * status` then said "not running" while the other gateway served. And it went on touching gateway.pid, whose
 * text ("1\n") was its own as well: once the other gateway was killed too, the file still looked touched by a
 * live gateway, so every start (`svc gateway start`, `gateway run` in a container) was refused while the
 * taken-over gateway, which answers 503, ran — the home had no working gateway.
 */

let home: TempHome | undefined;
let impostor: HealthImpostor | undefined;
/** A killed container's PID namespace, held open so that its id is not given to the next container. */
let heldNamespace: number | undefined;
afterEach(async () => {
  if (heldNamespace !== undefined) closeSync(heldNamespace);
  heldNamespace = undefined;
  await killContainers();
  await impostor?.close();
  impostor = undefined;
  home?.cleanup();
  home = undefined;
});

/**
 * The status of what answers `GET /health` on loopback `port` (0: it takes the connection but gives no HTTP
 * answer within a second), or undefined when nothing takes the connection.
 */
function healthStatus(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    let connected = false;
    const req = request({ host: "127.0.0.1", port, path: "/health", agent: false, timeout: 1000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("socket", (socket) => socket.once("connect", () => (connected = true)));
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(connected ? 0 : undefined));
    req.end();
  });
}

/** Until `gateway` has printed a line matching `pattern`. */
async function said(gateway: Contained, pattern: RegExp): Promise<void> {
  await vi.waitFor(() => expect(gateway.output()).toMatch(pattern), { timeout: 60_000, interval: 50 });
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

describe.runIf(UNSHARE && pidNamespace() !== undefined)(
  "gateway.pid of a gateway in another PID namespace",
  { timeout: 120_000 },
  () => {
    it("is kept by svc gateway status on the host while that gateway still starts (waiting for a state/LOCK of another namespace), which says it cannot tell, and a start there is refused", async () => {
      home = tempHome();
      const dir = home.dir;
      home.write("config.yaml", stringify(cliConfig({ a: { secret: "s" } })), 0o600);
      // A lock a gateway of a third namespace touched just now: the container's gateway waits up to 15 s for it.
      mkdirSync(join(dir, "state"), { recursive: true });
      writeFileSync(join(dir, "state", LOCK_FILE), "4121 12345 their-token pid:[4026530000]\n", {
        mode: 0o600,
      });
      const pidFile = join(dir, "gateway.pid");
      const stateFile = join(dir, "gateway.json");
      // Its monotonic clock is stepped past that wait once the commands below have seen it waiting.
      const clock = steppedClock();
      const contained = inContainer(dir, ["gateway", "run", "--port", "0"], clock);
      await said(contained, /\[state\] .* names a gateway of another PID namespace .*waiting up to/);
      const written = readFileSync(pidFile, "utf8");

      const status = await svc(home, ["gateway", "status"]);
      const ns = "pid:\\[\\d+\\]";
      expect(status.code, status.stdout).toBe(4);
      expect(status.stdout).toMatch(
        new RegExp(
          `^Gateway: unknown — ${pidFile} names pid ${written.trim()} of another PID namespace \\(${ns}; this command runs in ${ns}: .*\\) — whether that gateway runs cannot be told from here: .*\nHealth: not asked — that gateway has not recorded in ${stateFile} where it listens yet, as it does once it listens: it is still starting \\(waiting for the state directory's lock, or for Redis to load its data\\), or was killed before it listened\n$`,
        ),
      );
      expect(readFileSync(pidFile, "utf8")).toBe(written);
      // Touched by the gateway while the start watched it (or answering /health, once up): refused.
      const start = await svc(home, ["gateway", "start", "--timeout", "5"]);
      expect(start.code, start.stdout + start.stderr).toBe(2);
      expect(start.stderr).toMatch(/^svc: a gateway already runs on this SVC_HOME: /);
      expect(readFileSync(pidFile, "utf8")).toBe(written);
      // Its pid's namespace is in gateway.json from its claim on, before it listens.
      const claim = JSON.parse(readFileSync(stateFile, "utf8")) as Record<string, unknown>;
      expect(claim).toEqual({
        pid: Number(written.trim()),
        pid_namespace: expect.stringMatching(/^pid:\[\d+\]$/),
      });
      expect(claim.pid_namespace).not.toBe(pidNamespace());

      // Up once the lock stayed untouched: its files are where the host's commands find it.
      clock.step(FOREIGN_UNTOUCHED_MS);
      await said(contained, /Listening on 127\.0\.0\.1:\d+/);
      expect(readFileSync(pidFile, "utf8")).toBe(written);
      expect(JSON.parse(readFileSync(stateFile, "utf8"))).toMatchObject(claim);
      const up = await svc(home, ["gateway", "status"]);
      expect(up.code, up.stdout).toBe(0);
      expect(up.stdout).toMatch(
        new RegExp(`^Gateway: running \\(pid ${written.trim()} of another PID namespace, ${ns}, `),
      );
      expect(existsSync(join(dir, "logs", "gateway.out"))).toBe(false);
      await contained.kill();
    });

    it("taken over by a gateway of another namespace with the same pid, then reloaded, stops touching gateway.pid, so once that gateway is killed too another starts; stopped, it leaves the new gateway's gateway.pid and gateway.json as it wrote them", async () => {
      home = tempHome();
      const dir = home.dir;
      const config = (drain: number) =>
        stringify(cliConfig({ a: { secret: "s" } }, { gateway: { drain_timeout_seconds: drain } }));
      home.write("config.yaml", config(30), 0o600);
      const pidFile = join(dir, "gateway.pid");
      const stateFile = join(dir, "gateway.json");
      const first = inContainer(dir, ["gateway", "run", "--port", "0"]);
      await said(first, /Listening on 127\.0\.0\.1:\d+/);
      const firstPid = hostPid(first);
      // Paused (docker pause, SIGSTOP): it neither touches its files nor answers /health.
      signalProcess(firstPid, "SIGSTOP");
      // Its monotonic clock stepped past the bound once it watches gateway.pid, rather than waiting 15 s.
      const secondClock = steppedClock();
      const second = inContainer(dir, ["gateway", "run", "--port", "0"], secondClock);
      await said(second, /\[gateway\] .* which does not answer \/health.*: waiting up to /);
      // Short of the bound by 5 s, of which its own clock spends 2-3 while the test waits for a whole look on
      // the step: still watched then (at 11-12 s), not taken over.
      secondClock.step(FOREIGN_UNTOUCHED_MS - 5000);
      await lookedOnStep(second, secondClock);
      expect(second.output()).not.toMatch(/removed it|Listening on/);
      secondClock.step(5000);
      await said(second, /Listening on 127\.0\.0\.1:(\d+)/);
      const secondPort = Number(/Listening on 127\.0\.0\.1:(\d+)/.exec(second.output())?.[1]);
      expect(second.output()).toContain(`[gateway] ${pidFile} named pid 1 of another PID namespace`);
      const secondRecord = JSON.parse(readFileSync(stateFile, "utf8")) as Record<string, unknown>;
      // Both are their namespace's pid 1.
      expect(readFileSync(pidFile, "utf8")).toBe("1\n");
      expect(secondRecord).toMatchObject({ pid: 1, port: secondPort });

      // Run again: its next beat finds the state directory taken over, and says to stop it.
      signalProcess(firstPid, "SIGCONT");
      await said(first, /\[state\] .*no longer names this gateway: .* stop this gateway with kill 1 /);
      // A reload that changes its drain (which it records for svc gateway stop): not over the other's record.
      home.write("config.yaml", config(20), 0o600);
      signalProcess(firstPid, "SIGHUP");
      await said(first, /\[webhook\] Reloaded /);
      expect(JSON.parse(readFileSync(stateFile, "utf8"))).toEqual(secondRecord);

      // The other one killed (its container stopped): gateway.pid ("1\n", as the first one's would read) is
      // left untouched, so a start watches it for 15 s, removes it and goes on. Its port, let go, is taken by
      // another program answering /health 200 (in CI another test's listener took it): not that gateway's
      // answer, which names the instance its gateway.json records, so the start is not refused for it.
      // Its PID namespace is held open until the next gateway has started: the id of a namespace let go is
      // soon given again (the lowest free one), so a container made once the port is taken, maybe 10 s later,
      // could get the very id gateway.json records for the killed gateway, whose pid 1 the start would then
      // judge its own (itself: stale, removed without a watch), not this test's case.
      heldNamespace = openSync(`/proc/${hostPid(second)}/ns/pid`, "r");
      await second.kill();
      // Bound once the killed gateway's socket is gone (its process dies after unshare's exit), unless something
      // took the port first (another test's listener, as in CI): that is not that gateway either, and the start
      // must take the home over all the same. A port neither bound here nor held by anything fails the test,
      // which would otherwise not run its case.
      let firstTaker: number | undefined;
      impostor = await vi
        .waitFor(() => healthImpostor(secondPort), { timeout: 10_000, interval: 50 })
        .catch(async (err: unknown) => {
          firstTaker = await healthStatus(secondPort);
          if (firstTaker === undefined)
            throw new Error(
              `port ${secondPort}, the killed gateway's, could not be bound in 10 s and nothing listens there: the listener this test starts there is missing (${String(err)})`,
            );
          return undefined;
        });
      // Its 15 s watch of gateway.pid on its monotonic clock, stepped once it says it watches.
      const thirdClock = steppedClock();
      const third = inContainer(dir, ["gateway", "run", "--port", "0"], thirdClock);
      await said(third, /\[gateway\] .* which does not answer \/health.*: waiting up to |svc: /);
      thirdClock.step(FOREIGN_UNTOUCHED_MS - 5000);
      await lookedOnStep(third, thirdClock);
      expect(third.output()).not.toMatch(/removed it|Listening on|svc: /);
      thirdClock.step(5000);
      await said(third, /Listening on 127\.0\.0\.1:\d+|svc: /);
      closeSync(heldNamespace);
      heldNamespace = undefined;
      expect(third.output()).toMatch(/Listening on 127\.0\.0\.1:\d+/);
      expect(third.output()).toMatch(
        new RegExp(
          `\\[gateway\\] ${pidFile} named pid 1 of another PID namespace \\(${String(secondRecord.pid_namespace).replace(/[[\]]/g, "\\$&")};.*untouched for 1\\d\\.\\d s while this command watched it`,
        ),
      );
      const port = Number(/Listening on 127\.0\.0\.1:(\d+)/.exec(third.output())?.[1]);
      const pidText = readFileSync(pidFile, "utf8");
      const record = readFileSync(stateFile, "utf8");
      expect(pidText).toBe("1\n");
      expect(JSON.parse(record)).toMatchObject({ pid: 1, port });
      expect(JSON.parse(record).pid_namespace).not.toBe(secondRecord.pid_namespace);
      const namedOther = `which does not answer /health (another program (or another gateway) answers at 127.0.0.1:${secondPort}, where ${stateFile} says it listens: not that gateway): waiting up to`;
      if (impostor !== undefined) expect(impostor.asked()).toBeGreaterThan(0);
      if (impostor !== undefined || firstTaker === 200) expect(third.output()).toContain(namedOther);
      // What took the port first answers /health otherwise (or no longer listens): no answer from that gateway.
      else
        expect(third.output()).toMatch(
          /which does not answer \/health(?: \(another program .*?: not that gateway\))?: waiting up to/,
        );

      // Stopped as its ERROR advised: the new gateway's files stay as it wrote them.
      signalProcess(firstPid, "SIGTERM");
      await said(first, /\[gateway\] stopped \(exit 0\)/);
      await first.exited;

      expect(readFileSync(pidFile, "utf8")).toBe(pidText);
      expect(readFileSync(stateFile, "utf8")).toBe(record);
      const status = await svc(home, ["gateway", "status"]);
      expect(status.code, status.stdout).toBe(0);
      expect(status.stdout).toMatch(
        new RegExp(
          `^Gateway: running \\(pid 1 of another PID namespace, pid:\\[\\d+\\], which this command cannot check: its /health answers\\)\nListening: 127\\.0\\.0\\.1:${port}\nHealth: ok\n$`,
        ),
      );
      await third.kill();
    });
  },
);
