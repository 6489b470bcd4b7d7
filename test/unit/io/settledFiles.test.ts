import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Settled, settledFiles } from "../../../src/io/settledFiles.js";
import { fakeClock } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

/** The wait a reload makes for config.yaml (and .env) to be written whole, on a fake clock. */

const FULL = "platforms:\n  webhook:\n    routes:\n      alpha: {secret: a}\n      beta: {secret: b}\n";
const CUT = FULL.slice(0, FULL.indexOf("      beta"));
const TIMES = { settleMs: 200, maxWaitMs: 1000 };

describe("settledFiles", () => {
  let home: TempHome;
  beforeEach(() => {
    home = tempHome();
  });
  afterEach(() => home.cleanup());

  /** Lets the wait's reads and its next timer run after the clock moved. */
  const turns = async () => {
    for (let i = 0; i < 5; i++) await Promise.resolve();
  };
  const track = (promise: Promise<Settled>) => {
    const seen: { result?: Settled } = {};
    void promise.then((result) => {
      seen.result = result;
    });
    return seen;
  };

  it("a file unchanged over the settle time is settled after one wait, not before", async () => {
    const clock = fakeClock();
    const config = home.write("config.yaml", FULL);
    const seen = track(settledFiles([config], clock, TIMES));
    clock.advance(199);
    await turns();
    expect(seen.result).toBeUndefined();
    clock.advance(1);
    await turns();
    expect(seen.result).toEqual({ settled: true });
  });

  it("a file caught cut short is waited for until its writer has finished it", async () => {
    const clock = fakeClock();
    const config = home.write("config.yaml", CUT);
    const seen = track(settledFiles([config, join(home.dir, ".env")], clock, TIMES));
    // The writer finishes while the first wait runs: the second read differs, so it waits once more.
    home.write("config.yaml", FULL);
    clock.advance(200);
    await turns();
    expect(seen.result).toBeUndefined();
    clock.advance(200);
    await turns();
    expect(seen.result).toEqual({ settled: true });
  });

  it("a file replaced (absent for a moment) counts as changing; absent at both reads as settled", async () => {
    const clock = fakeClock();
    const config = home.write("config.yaml", FULL);
    const env = join(home.dir, ".env");
    const seen = track(settledFiles([config, env], clock, TIMES));
    rmSync(config);
    clock.advance(200);
    await turns();
    expect(seen.result).toBeUndefined();
    home.write("config.yaml", FULL);
    clock.advance(200);
    await turns();
    expect(seen.result).toBeUndefined();
    clock.advance(200);
    await turns();
    expect(seen.result).toEqual({ settled: true });
  });

  it("a file that never stops changing is reported, naming it, once the longest wait has passed", async () => {
    const clock = fakeClock();
    const config = home.write("config.yaml", "a: 0\n");
    const env = home.write(".env", "X=1\n");
    const seen = track(settledFiles([config, env], clock, TIMES));
    for (let i = 1; i <= 4; i++) {
      home.write("config.yaml", `a: ${i}\n`);
      clock.advance(200);
      await turns();
      expect(seen.result).toBeUndefined();
    }
    home.write("config.yaml", "a: 5\n");
    clock.advance(200);
    await turns();
    expect(seen.result).toEqual({ settled: false, changing: [config] });
  });
});
