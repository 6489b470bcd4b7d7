import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readEnvFile } from "../../../src/config/envFile.js";
import { SVC_ARGV } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { runOnTerminal } from "../../helpers/pty.js";

let home: TempHome;
afterEach(() => home.cleanup());

/** `svc gateway setup <args>` on a terminal in the test's home, answering `steps`. */
const setupOnTerminal = (args: readonly string[], steps: Parameters<typeof runOnTerminal>[2]) =>
  runOnTerminal(
    [process.execPath, ...SVC_ARGV, "gateway", "setup", ...args],
    { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir, TERM: "dumb" },
    steps,
  );

describe("svc gateway setup on a terminal", { timeout: 90_000 }, () => {
  it("does not show the secret as it is typed; the other answers are echoed as usual", async () => {
    home = tempHome();
    const secret = "typed-secret-Q7xv9";
    const result = await setupOnTerminal(
      [],
      [
        { expect: "Enable the webhook adapter?", type: "y\r" },
        { expect: "Port [", type: "9123\r" },
        { expect: "[e]nter your own?", type: "e\r" },
        { expect: "Secret", type: `${secret}\r` },
      ],
    );
    expect(result.code).toBe(0);
    expect(result.screen).toContain("9123");
    expect(result.screen).not.toContain(secret);
    expect(result.screen).toContain("Global webhook secret: the one you gave");
    expect(readEnvFile(join(home.dir, ".env"))).toMatchObject({
      WEBHOOK_PORT: "9123",
      WEBHOOK_SECRET: secret,
    });
  });

  it("Ctrl-C at a question cancels setup: nothing is written, and it ends as a Ctrl-C does (not with the defaults)", async () => {
    home = tempHome();
    const result = await setupOnTerminal(
      [],
      [
        { expect: "Enable the webhook adapter?", type: "y\r" },
        { expect: "Port [", type: "\u0003" },
      ],
    );
    // Killed by SIGINT: Python reports it as -2 (a shell as 130).
    expect(result.code).toBe(-2);
    expect(result.screen).not.toContain("Wrote");
    expect(existsSync(join(home.dir, ".env"))).toBe(false);
  });

  it("Ctrl-C while the secret is typed (echo off) cancels setup and leaves the terminal echoing again", async () => {
    home = tempHome();
    const result = await setupOnTerminal(
      [],
      [
        { expect: "Enable the webhook adapter?", type: "y\r" },
        { expect: "Port [", type: "\r" },
        { expect: "[e]nter your own?", type: "e\r" },
        { expect: "Secret (not shown as you type): ", type: "half-typed\u0003" },
      ],
    );
    expect(result.code).toBe(-2);
    expect(result.screen).not.toContain("half-typed");
    expect(result.echo).toBe(true);
    expect(existsSync(join(home.dir, ".env"))).toBe(false);
  });

  it("Ctrl-D at a question on a terminal cancels setup (exit 1, nothing written), not Enter at every question left", async () => {
    home = tempHome();
    const result = await setupOnTerminal([], [{ expect: "Enable the webhook adapter?", type: "\u0004" }]);
    expect(result.code).toBe(1);
    expect(result.screen).not.toContain("Port [");
    expect(result.screen).not.toContain("Wrote");
    // The cancel starts a line of its own, under the question left unanswered.
    expect(result.screen).toContain(
      "[Y/n] \r\nsvc: setup cancelled (Ctrl-D, end of input): nothing was written",
    );
    expect(existsSync(join(home.dir, ".env"))).toBe(false);
  });

  it("a config.yaml setup cannot edit is named before the first question, not after a secret was typed in vain", async () => {
    home = tempHome();
    writeFileSync(join(home.dir, "config.yaml"), "platforms:\n  webhook: [\n");
    const result = await setupOnTerminal(
      [],
      [
        { expect: "Enable the webhook adapter?", type: "y\r" },
        { expect: "Port [", type: "\r" },
        { expect: "[e]nter your own?", type: "e\r" },
        { expect: "Secret", type: "typed-in-vain\r" },
      ],
    );
    expect(result.code).toBe(1);
    expect(result.screen).not.toContain("Enable the webhook adapter?");
    expect(result.screen).toContain("config.yaml: line 2: not valid YAML");
    expect(result.screen).toContain("fix it before running setup");
    expect(existsSync(join(home.dir, ".env"))).toBe(false);
  });

  it("a WEBHOOK_PORT in .env that is no port is not offered as the default (Enter would be refused at every asking)", async () => {
    home = tempHome();
    home.write(".env", "WEBHOOK_PORT=abc\n");
    const result = await setupOnTerminal(
      [],
      [
        { expect: "Enable the webhook adapter?", type: "\r" },
        { expect: "Port [", type: "\r" },
        { expect: "[e]nter your own?", type: "\r" },
      ],
    );
    expect(result.code).toBe(0);
    expect(result.screen).toContain("Port [8644]: ");
    expect(readEnvFile(join(home.dir, ".env"))).toMatchObject({ WEBHOOK_PORT: "8644" });
  });

  it("a flag given on a terminal answers its question, which is not asked (its answer would be overruled)", async () => {
    home = tempHome();
    const result = await setupOnTerminal(
      ["--disable", "--generate-secret"],
      [{ expect: "Port [", type: "9124\r" }],
    );
    expect(result.code).toBe(0);
    expect(result.screen).not.toContain("Enable the webhook adapter?");
    expect(result.screen).not.toContain("Global secret:");
    const env = readEnvFile(join(home.dir, ".env"));
    expect(env).toMatchObject({ WEBHOOK_ENABLED: "false", WEBHOOK_PORT: "9124" });
    expect(result.screen).toContain(`Global webhook secret: ${env.WEBHOOK_SECRET}`);
  });
});
