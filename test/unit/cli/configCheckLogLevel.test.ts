import { afterEach, describe, expect, it } from "vitest";
import { checkConfig } from "../../../src/cli/config/check.js";
import { logLevel } from "../../../src/io/log.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let dir: TempHome;
afterEach(() => dir.cleanup());

/**
 * svc gateway run refuses an SVC_LOG_LEVEL it does not know (exit 2) before it reads anything, but
 * svc config check in the same shell said ok: the check now names it as the gateway does.
 */
describe("svc config check and SVC_LOG_LEVEL", () => {
  it("a level the gateway refuses is a problem, with the gateway's own words", async () => {
    dir = tempHome();
    const report = await checkConfig({ home: dir.dir, env: { SVC_LOG_LEVEL: "verbose" } });
    expect(report.problems).toEqual([
      'the environment variable SVC_LOG_LEVEL is "verbose" — use one of fatal, error, warn, info, debug, trace, silent',
    ]);
  });

  it("names the level meant for a typo (dbug) or the longer name other tools use (WARNING, information)", async () => {
    dir = tempHome();
    const problems = async (level: string) =>
      (await checkConfig({ home: dir.dir, env: { SVC_LOG_LEVEL: level } })).problems;
    expect(await problems("dbug")).toEqual([
      'the environment variable SVC_LOG_LEVEL is "dbug" — did you mean debug? use one of fatal, error, warn, info, debug, trace, silent',
    ]);
    expect((await problems("WARNING"))[0]).toContain('is "WARNING" — did you mean warn? use one of');
    expect((await problems("information"))[0]).toContain("did you mean info?");
  });

  it("a known level, or none, is fine", async () => {
    dir = tempHome();
    expect((await checkConfig({ home: dir.dir, env: { SVC_LOG_LEVEL: "debug" } })).problems).toEqual([]);
    expect((await checkConfig({ home: dir.dir, env: {} })).problems).toEqual([]);
  });
});

describe("SVC_LOG_LEVEL written in capitals, with spaces, or blank", () => {
  it("DEBUG or ' Warn ' is the level pino names debug or warn, for the check and the gateway alike", async () => {
    dir = tempHome();
    for (const written of ["DEBUG", " Warn ", "Trace"])
      expect((await checkConfig({ home: dir.dir, env: { SVC_LOG_LEVEL: written } })).problems).toEqual([]);
    expect(logLevel("DEBUG")).toBe("debug");
    expect(logLevel(" Warn ")).toBe("warn");
    expect(() => logLevel("VERBOSE")).toThrow('the log level is "VERBOSE"');
  });

  it("empty or blank counts as unset: the default level, not a refusal", async () => {
    dir = tempHome();
    expect((await checkConfig({ home: dir.dir, env: { SVC_LOG_LEVEL: " " } })).problems).toEqual([]);
    const before = process.env.SVC_LOG_LEVEL;
    process.env.SVC_LOG_LEVEL = "";
    try {
      expect(logLevel(undefined)).toBe("info");
    } finally {
      if (before === undefined) delete process.env.SVC_LOG_LEVEL;
      else process.env.SVC_LOG_LEVEL = before;
    }
  });
});
