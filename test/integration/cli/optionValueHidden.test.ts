import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { loadInProcessCli, runInProcess } from "../../helpers/inProcessCli.js";

// The first in-process command of a worker would load the CLI within a test's time; loaded here instead.
beforeAll(() => loadInProcessCli(), 180_000);

let home: TempHome;
afterEach(() => home.cleanup());

const SECRET = "s3cr3t-Zq8";

/**
 * `svc <args>` to its end, in this worker (helpers/inProcessCli.ts: the parser refuses it before any
 * command runs, so nothing starts): exit 2, the secret nowhere.
 */
async function refused(args: readonly string[]): Promise<string> {
  const res = await runInProcess(args, { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir });
  expect(res.code).toBe(2);
  expect(res.stdout + res.stderr).not.toContain(SECRET);
  return res.stderr;
}

describe("a mistyped option's value is not echoed back (it may be a secret)", { timeout: 60_000 }, () => {
  it("an unknown --option=value is named without its value, and keeps commander's did-you-mean", async () => {
    home = tempHome();
    const subscribe = await refused(["webhook", "subscribe", "gh", `--secrte=${SECRET}`]);
    expect(subscribe).toContain(
      "error: unknown option '--secrte' (its value is not shown)\n(Did you mean --secret?)\n",
    );
    const run = await refused(["gateway", "run", "--port", "0", `--webhook-secret=${SECRET}`]);
    expect(run).toContain("error: unknown option '--webhook-secret' (its value is not shown)\n");
    // svc mcp add's own note (the server's options go after --) is kept, its value left out all the same.
    const add = await refused(["mcp", "add", "files", "npx", `--token=${SECRET}`]);
    expect(add).toContain(
      "error: unknown option '--token' (its value is not shown) — the server's command and its options go after --",
    );
  });

  it("a value given to an option that takes none names that option and what to write, not a did-you-mean of itself", async () => {
    home = tempHome();
    // commander calls `--deliver-only=false` an unknown option; it was answered "unknown option
    // '--deliver-only' ... (Did you mean --deliver-only?)", naming the option typed as the one meant.
    const flag = await refused(["webhook", "subscribe", "gh", "--deliver-only=false"]);
    expect(flag).toContain(
      "error: option '--deliver-only' takes no value (its value is not shown) — write --deliver-only alone (or --no-deliver-only)\n",
    );
    expect(flag).not.toContain("unknown option");
    expect(flag).not.toContain("Did you mean");
    const negated = await refused(["webhook", "subscribe", "gh", "--no-mirror-to-session=1"]);
    expect(negated).toContain(
      "error: option '--no-mirror-to-session' takes no value (its value is not shown) — write --no-mirror-to-session alone (or --mirror-to-session)\n",
    );
    // A switch with no opposite names itself alone; a mistyped one keeps its did-you-mean.
    const json = await refused(["webhook", "deliveries", `--json=${SECRET}`]);
    expect(json).toContain(
      "error: option '--json' takes no value (its value is not shown) — write --json alone\n",
    );
    const typo = await refused(["webhook", "subscribe", "gh", "--deliver-onyl=1"]);
    expect(typo).toContain(
      "error: unknown option '--deliver-onyl' (its value is not shown)\n(Did you mean --deliver-only?)\n",
    );
    expect(existsSync(join(home.dir, "webhook_subscriptions.json"))).toBe(false);
  });

  it("a short option with text after it, and a NAME=value taken for a command, are named without the rest", async () => {
    home = tempHome();
    const short = await refused(["webhook", "subscribe", "gh", `-p${SECRET}`]);
    expect(short).toContain("error: unknown option '-p' (what follows it is not shown)\n");
    // An environment variable written after svc instead of before it.
    const command = await refused([`WEBHOOK_SECRET=${SECRET}`, "gateway", "run"]);
    expect(command).toContain("error: unknown command 'WEBHOOK_SECRET' (its value is not shown)\n");
    const gateway = await refused(["gateway", `WEBHOOK_SECRET=${SECRET}`]);
    expect(gateway).toContain(
      "svc: unknown command 'gateway WEBHOOK_SECRET' (its value is not shown) — use svc gateway run|start|stop|status|setup",
    );
  });
});
