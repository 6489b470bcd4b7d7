import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { settledReloader } from "../../../src/cli/settledReload.js";
import { fakeClock } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

/** The SIGHUP reload waits for config.yaml to be written whole, on a fake clock. */

const FULL = "platforms:\n  webhook:\n    routes:\n      alpha: {secret: a}\n      beta: {secret: b}\n";
const CUT = FULL.slice(0, FULL.indexOf("      beta"));
const TIMES = { settleMs: 200, maxWaitMs: 600 };

describe("settledReloader", () => {
  let home: TempHome;
  beforeEach(() => {
    home = tempHome();
  });
  afterEach(() => home.cleanup());

  const turns = async () => {
    for (let i = 0; i < 8; i++) await Promise.resolve();
  };

  const setup = () => {
    const clock = fakeClock();
    const file = home.write("config.yaml", CUT);
    const reloads: string[] = [];
    const warnings: string[] = [];
    const notes: string[] = [];
    const reloader = settledReloader({
      files: [file],
      clock,
      warn: (line) => warnings.push(line),
      info: (line) => notes.push(line),
      times: TIMES,
      reload: () => reloads.push("reload"),
    });
    return { clock, file, reloads, warnings, notes, reloader };
  };

  it("a SIGHUP sent while the file is still being written reloads once the writer has finished", async () => {
    const { clock, reloads, reloader } = setup();
    const done = reloader.sighup();
    home.write("config.yaml", FULL);
    clock.advance(200);
    await turns();
    expect(reloads).toEqual([]);
    clock.advance(200);
    await done;
    expect(reloads).toHaveLength(1);
  });

  it("SIGHUPs while it waits add one reload after it, not one each", async () => {
    const { clock, reloads, reloader } = setup();
    const done = reloader.sighup();
    void reloader.sighup();
    void reloader.sighup();
    clock.advance(200);
    await turns();
    expect(reloads).toHaveLength(1);
    clock.advance(200);
    await done;
    expect(reloads).toHaveLength(2);
  });

  it("a stop that began while it waited: no reload, and the log says so when the stop begins", async () => {
    const { clock, file, reloads, notes, reloader } = setup();
    const done = reloader.sighup();
    reloader.stopBegan();
    // Said before the wait ends: a stop with little to drain ends the process before that.
    const ignored = `[gateway] SIGHUP received before the stop: ignored — the gateway began stopping while it waited for ${file} to stay unchanged; nothing is reloaded, the next start reads them`;
    expect(notes).toEqual([ignored]);
    clock.advance(200);
    await done;
    expect(reloads).toEqual([]);
    expect(notes).toEqual([ignored]);
  });

  it("a stop with no reload waiting says nothing of a SIGHUP, and a SIGHUP after it reloads nothing", async () => {
    const { clock, reloads, notes, reloader } = setup();
    reloader.stopBegan();
    const done = reloader.sighup();
    clock.advance(200);
    await done;
    expect(reloads).toEqual([]);
    expect(notes).toEqual([]);
  });

  it("a file still changing at the longest wait: reloaded, with a warning naming it", async () => {
    const { clock, file, reloads, warnings, reloader } = setup();
    const done = reloader.sighup();
    for (let i = 0; i < 3; i++) {
      home.write("config.yaml", `${FULL}# ${i}\n`);
      clock.advance(200);
      await turns();
    }
    await done;
    expect(reloads).toHaveLength(1);
    expect(warnings).toEqual([
      `[gateway] ${file} still changed 0.6 s after the SIGHUP: reloading what it holds now — if its writer was not done, send SIGHUP again once it is`,
    ]);
  });
});
