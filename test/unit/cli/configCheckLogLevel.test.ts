import { afterEach, describe, expect, it } from "vitest";
import { checkConfig } from "../../../src/cli/config/check.js";
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

  it("a known level, or none, is fine", async () => {
    dir = tempHome();
    expect((await checkConfig({ home: dir.dir, env: { SVC_LOG_LEVEL: "debug" } })).problems).toEqual([]);
    expect((await checkConfig({ home: dir.dir, env: {} })).problems).toEqual([]);
  });
});
