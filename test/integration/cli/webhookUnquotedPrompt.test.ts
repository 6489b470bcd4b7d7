import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { loadInProcessCli, runEachInProcess } from "../../helpers/inProcessCli.js";

beforeAll(() => loadInProcessCli("webhook"), 180_000);

let home: TempHome;
beforeAll(() => {
  home = tempHome();
  home.write("config.yaml", "platforms:\n  webhook:\n    enabled: true\n    host: 127.0.0.1\n");
});
afterAll(() => home.cleanup());

const each = <const T extends readonly (readonly string[])[]>(...argsList: T) =>
  runEachInProcess(argsList, { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir });

describe("svc webhook subscribe with a prompt or description not in quotes", { timeout: 90_000 }, () => {
  it("names the option the stray words follow and the quotes to write, never the words (was: too many arguments ... Expected 1 argument but got 4)", async () => {
    const [prompt, description, operand] = await each(
      ["webhook", "subscribe", "gh", "--prompt", "Review", "the", "PR", "--deliver", "log"],
      ["webhook", "subscribe", "gh", "--description", "web", "team"],
      ["webhook", "subscribe", "gh", "other"],
    );
    for (const r of [prompt, description, operand]) {
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("Usage: svc webhook subscribe");
    }
    expect(prompt.stderr.split("\n")[0]).toBe(
      'error: --prompt takes one value, and 2 more words followed it — write the whole value in quotes, as in --prompt "Review {pull_request.title}" (unquoted, the shell splits it into words)',
    );
    expect(prompt.stderr).not.toContain('"PR"');
    expect(description.stderr.split("\n")[0]).toContain(
      "error: --description takes one value, and 1 more word followed it",
    );
    // A second name is no unquoted value: commander's own line.
    expect(operand.stderr).toContain("error: too many arguments for 'subscribe'");
    expect(existsSync(join(home.dir, "webhook_subscriptions.json"))).toBe(false);
  });
});
