import { afterEach, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { runInProcess } from "../../helpers/inProcessCli.js";

let home: TempHome | undefined;
afterEach(() => {
  home?.cleanup();
  home = undefined;
});

// Both are refused before anything starts, so they run in this process (no gateway is spawned).
const gateway = (...args: string[]) => {
  home ??= tempHome();
  return runInProcess(["gateway", ...args], {
    PATH: process.env.PATH ?? "",
    HOME: home.dir,
    SVC_HOME: home.dir,
  });
};

describe("svc gateway with an operand it does not take (exit 2)", () => {
  it("svc gateway start foo is refused as start's extra argument, as stop, status and run refuse one", async () => {
    const result = await gateway("start", "foo");
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("error: too many arguments for 'start'. Expected 0 arguments but got 1.");
    expect(result.stderr).toContain("Usage: svc gateway start [options]");
    expect(result.stderr).not.toContain("unknown command");
  });

  it("svc gateway stauts is an unknown gateway command, with the one meant", async () => {
    const result = await gateway("stauts");
    expect(result).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("unknown command 'gateway stauts' — did you mean svc gateway status?"),
    });
  });

  it("svc gateway logs -f names the command it does not have, not the option as one of start's", async () => {
    // `start` is the group's default, so its parser meets the option before the word is seen as a command.
    const logs = await gateway("logs", "-f");
    expect(logs.code).toBe(2);
    expect(logs.stderr).toContain("svc: unknown command 'gateway logs' — svc gateway has no logs command");
    expect(logs.stderr).not.toContain("unknown option");
    expect(logs.stderr).not.toContain("Usage: svc gateway start");
    const typo = await gateway("stauts", "--json");
    expect(typo).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("unknown command 'gateway stauts' — did you mean svc gateway status?"),
    });
    // Named as start, or with no command at all, an unknown option is still start's.
    for (const args of [["start", "-f"], ["-f"]]) {
      const refused = await gateway(...args);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain("error: unknown option '-f'");
      expect(refused.stderr).toContain("Usage: svc gateway start [options]");
    }
  });
});
