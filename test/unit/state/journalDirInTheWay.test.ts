import { readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Clock } from "../../../src/clock.js";
import type { StateSettings } from "../../../src/config/sections/state.js";
import { SEGMENT_CHECK_MS } from "../../../src/io/state/journal/journal.js";
import { segmentName } from "../../../src/io/state/journal/segments.js";
import { openStateStore } from "../../../src/state/gatewayState.js";
import { LocalStateStore } from "../../../src/state/localStore.js";
import type { StateStore } from "../../../src/state/store.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { pendingRun } from "../../helpers/pendingRun.js";

let home: TempHome | undefined;
let store: StateStore | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
  home?.cleanup();
});

const LOCAL = { backend: "local" } as StateSettings;

/**
 * The local journal open in `home` with one run accepted and written, its once-a-second look run by the test:
 * `seconds(n)` runs it n times, the clock a second on each time, as the timer does (a throw there is the gateway's
 * uncaught exception); `said()` is what the store logged but its replay.
 */
async function journalRunning(home: TempHome) {
  const dir = join(home.dir, "state");
  let now = 1_000_000;
  let look: (() => void) | undefined;
  const timers: Pick<Clock, "setTimeout" | "clearTimeout"> = {
    setTimeout: (fn) => {
      look = fn;
      return 1;
    },
    clearTimeout: () => {
      look = undefined;
    },
  };
  const log = captureLogger();
  const opened = openStateStore(LOCAL, home.dir, log.logger, () => now, timers);
  store = opened;
  if (!(opened instanceof LocalStateStore)) throw new Error("not the local journal");
  const { journal } = opened;
  opened.runAccepted(pendingRun("a"), now);
  await journal.durable();
  const said = () =>
    log.messages().filter((line) => line.startsWith("[state]") && !line.includes("replayed"));
  const seconds = async (n: number) => {
    for (let i = 0; i < n; i += 1) {
      now += SEGMENT_CHECK_MS;
      look?.();
      await journal.rotated();
    }
  };
  const lost = `[state] the journal in ${dir} could not be made again after the state directory was removed or moved while the gateway ran`;
  /** A run accepted now, and whether its batch was made durable (a 202) or refused (a 503). */
  const accept = async (deliveryId: string) => {
    opened.runAccepted(pendingRun(deliveryId), now);
    return journal.durable()?.then(
      () => "durable",
      () => "refused",
    );
  };
  return { dir, journal, said, seconds, lost, accept };
}

/**
 * Seen: with state/ replaced by a link to /dev/null while the gateway ran, the pair WARN "…journal-000001.seg: no
 * longer names the file …" and ERROR "the journal in …/state could not be made again … {err: EEXIST: file already
 * exists, mkdir '…/state'}" every second, with no request coming, the ERROR not naming the link.
 */
describe("something no directory in the state directory's place while the gateway runs", () => {
  it("is named with what to change, and the pair is logged once until what is in the way changes or the journal is made again", async () => {
    home = tempHome();
    const { dir, journal, said, seconds, lost } = await journalRunning(home);
    const later =
      "the requests waiting for it answer 503 (their senders retry), as do later ones until it can be (tried again each second, said again only if what is in the directory's place changes)";

    rmSync(dir, { recursive: true });
    symlinkSync("/dev/null", dir);
    await seconds(5);
    expect(said()).toEqual([
      expect.stringMatching(/^\[state\] .*journal-0+1\.seg: no longer names the file the gateway writes/),
      `${lost}: ${dir} is a symbolic link to /dev/null, which is a device, not a directory; ${later} — point the link at a directory, or remove the link (the gateway makes the directory)`,
    ]);
    expect(journal.accepting()).toBe(false);

    // What is in the way changed: said again, once.
    rmSync(dir);
    writeFileSync(dir, "x");
    await seconds(5);
    expect(said().slice(2)).toEqual([
      expect.stringMatching(/no longer names the file the gateway writes/),
      `${lost}: ${dir} is a file, not a directory; ${later} — move that file away (the gateway makes the directory)`,
    ]);

    // Moved away: the next look makes the journal again, and nothing more is said of it.
    rmSync(dir);
    await seconds(3);
    expect(said()).toHaveLength(4);
    expect(journal.accepting()).toBe(true);
  });

  /**
   * Seen: `mv state state.old && ln -s state state` (or `ln -s config.yaml/x state`) stopped the gateway, "internal
   * error (an uncaught exception) {err: ELOOP: too many symbolic links encountered, stat '…/state'}" (ENOTDIR), from
   * the look's timer; and the link below a file, named, was said as nothing in the way.
   */
  it("a loop of links, or a link to a name below a file, in its place is named once, and the gateway runs on", async () => {
    home = tempHome();
    const { dir, journal, said, seconds, lost } = await journalRunning(home);
    const segmentLost = expect.stringMatching(/no longer names the file the gateway writes/);
    const later =
      "the requests waiting for it answer 503 (their senders retry), as do later ones until it can be (tried again each second, said again only if what is in the directory's place changes)";

    // mv state state.old && ln -s state state
    renameSync(dir, join(home.dir, "state.old"));
    symlinkSync("state", dir);
    await seconds(5);
    const loop = `${lost}: ${dir} is a symbolic link into a loop of links, or a chain of more than 40; ${later} — point the link at a directory, or remove the link (the gateway makes the directory)`;
    expect(said()).toEqual([segmentLost, loop]);
    expect(journal.accepting()).toBe(false);

    // ln -s config.yaml/x state: said again, once.
    home.write("config.yaml", "x: 1\n");
    rmSync(dir);
    symlinkSync("config.yaml/x", dir);
    await seconds(5);
    const config = join(home.dir, "config.yaml");
    expect(said().slice(2)).toEqual([
      segmentLost,
      `${lost}: ${dir} is a symbolic link to ${config}/x, which cannot be made: ${config}, on the way to it, is a file, not a directory; ${later} — point the link at a directory, or remove the link (the gateway makes the directory)`,
    ]);

    // A link to nothing, then swapped for a loop: each named once.
    rmSync(dir);
    symlinkSync("nowhere", dir);
    await seconds(3);
    rmSync(dir);
    symlinkSync("state", dir);
    await seconds(3);
    expect(said().slice(4)).toEqual([
      segmentLost,
      `${lost}: ${dir} is a symbolic link to ${join(home.dir, "nowhere")}, which does not exist; ${later} — create that directory, or remove the link (the gateway makes the directory)`,
      segmentLost,
      loop,
    ]);

    // Removed: the journal is made again, and nothing more is said.
    rmSync(dir);
    await seconds(3);
    expect(said()).toHaveLength(8);
    expect(journal.accepting()).toBe(true);
  });

  /**
   * Seen: `ln -s /tmp/xxx…(300 x) state` stopped the gateway, "internal error (an uncaught exception) {err:
   * ENAMETOOLONG: name too long, stat '…/state'}", from the look's timer: only ELOOP and ENOTDIR were taken as no
   * directory there.
   */
  it("a link in its place that cannot be looked at for another reason (a name too long) stops nothing either", async () => {
    home = tempHome();
    const { dir, journal, said, seconds } = await journalRunning(home);
    renameSync(dir, join(home.dir, "state.old"));
    symlinkSync(`/tmp/${"x".repeat(300)}`, dir);
    await seconds(5);
    expect(said().length).toBeGreaterThan(0);
    expect(journal.accepting()).toBe(false);
    rmSync(dir);
    await seconds(3);
    expect(journal.accepting()).toBe(true);
  });
});

/**
 * Seen: a request 202; `mv state state.old && ln -s state state` → 503 with the loop named; then `rm state && mv
 * state.old state` (the very directory the gateway had) → every later request 503 for good, nothing logged: the look
 * tried a relocation only when the segment's path named another file, and it named the one held again.
 */
describe("the state directory put back in its place after the journal could not be made again", () => {
  const later =
    "the requests waiting for it answer 503 (their senders retry), as do later ones until it can be (tried again each second, said again only if what is in the directory's place changes)";
  const segmentLost = expect.stringMatching(/no longer names the file the gateway writes/);

  it.each([
    {
      inPlace: "a loop of links",
      put: (dir: string) => symlinkSync("state", dir),
      said: "is a symbolic link into a loop of links, or a chain of more than 40",
      fix: "point the link at a directory, or remove the link",
    },
    {
      inPlace: "a file",
      put: (dir: string) => writeFileSync(dir, "x"),
      said: "is a file, not a directory",
      fix: "move that file away",
    },
  ])(
    "after $inPlace stood there: the next look ends the loss, said once, and requests are written to its segment again",
    async ({ put, said: inTheWay, fix }) => {
      home = tempHome();
      const { dir, journal, said, seconds, lost, accept } = await journalRunning(home);
      const old = join(home.dir, "state.old");
      const segment = join(dir, segmentName(1));

      // mv state state.old, then something no directory in its place.
      renameSync(dir, old);
      put(dir);
      await seconds(3);
      expect(said()).toEqual([
        segmentLost,
        `${lost}: ${dir} ${inTheWay}; ${later} — ${fix} (the gateway makes the directory)`,
      ]);
      expect(journal.accepting()).toBe(false);
      expect(await accept("while-lost")).toBe("refused");

      // rm state && mv state.old state: the directory the gateway writes in, its segment and its lock.
      rmSync(dir);
      renameSync(old, dir);
      await seconds(1);
      expect(journal.accepting()).toBe(true);
      expect(said().slice(2)).toEqual([
        `[state] the journal in ${dir} is written again: the state directory is back in its place, and ${segment} with it; requests are recorded (and answered 202) again`,
      ]);
      expect(await accept("after-back")).toBe("durable");
      expect(journal.currentSegment().n).toBe(1);
      expect(readFileSync(segment, "utf8")).toContain("after-back");

      // Nothing more is said, and it stays so.
      await seconds(3);
      expect(said()).toHaveLength(3);
      expect(journal.accepting()).toBe(true);
    },
  );

  it("put back with its LOCK gone meanwhile: made again as a removed one is, the lock taken again and a new segment", async () => {
    home = tempHome();
    const { dir, journal, said, seconds, accept } = await journalRunning(home);
    const old = join(home.dir, "state.old");
    renameSync(dir, old);
    symlinkSync("state", dir);
    await seconds(3);
    expect(said()).toHaveLength(2);

    rmSync(join(old, "LOCK"));
    rmSync(dir);
    renameSync(old, dir);
    await seconds(1);
    expect(journal.accepting()).toBe(true);
    expect(journal.currentSegment().n).toBe(2);
    expect(said()).toHaveLength(2);
    expect(readFileSync(join(dir, "LOCK"), "utf8")).toContain(`${process.pid} `);
    expect(await accept("after-back")).toBe("durable");
    expect(readFileSync(join(dir, segmentName(2)), "utf8")).toContain("after-back");
  });
});
