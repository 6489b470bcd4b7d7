import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc, svcEach } from "./svc.js";

let home: TempHome;
beforeEach(() => {
  home = tempHome();
});
afterEach(() => home.cleanup());

const refused = (flags: string, next: string) =>
  `error: option '${flags}' argument missing — the next word, ${next}, is an option of this command (to use it as the value, write ${flags.split(" ")[0]}=${next})`;

describe("an option left without its value, followed by an option of the command", {
  timeout: 90_000,
}, () => {
  it("is refused (exit 2) naming the option and the next word, and nothing is written", async () => {
    const results = await svcEach(home, [
      ["gateway", "setup", "--non-interactive", "--secret", "--generate-secret"],
      ["webhook", "subscribe", "y", "--secret", "--description", "s3cr3t-words"],
      ["webhook", "subscribe", "w", "--prompt", "--deliver-only", "--deliver", "telegram"],
      ["webhook", "subscribe", "v", "--secret", "--no-mirror-to-session"],
      ["cron", "create", "--name", "hh", "--schedule", "@daily", "--prompt", "--help"],
      ["cron", "create", "--name", "hh", "--schedule", "@daily", "--prompt", "-h"],
    ]);
    const [setup, secret, prompt, negated, help, shortHelp] = results;
    expect(setup.stderr).toContain(refused("--secret <secret>", "--generate-secret"));
    expect(secret.stderr).toContain(refused("--secret <secret>", "--description"));
    expect(prompt.stderr).toContain(refused("--prompt <template>", "--deliver-only"));
    expect(negated.stderr).toContain(refused("--secret <secret>", "--no-mirror-to-session"));
    expect(help.stderr).toContain(refused("--prompt <text>", "--help"));
    expect(shortHelp.stderr).toContain(refused("--prompt <text>", "-h"));
    for (const result of results) {
      expect(result.code).toBe(2);
      // Neither help printed as asked for nor any other value of the line echoed.
      expect(result.stdout).toBe("");
      expect(result.stderr).not.toContain("s3cr3t");
    }
    expect(existsSync(join(home.dir, ".env"))).toBe(false);
    expect(existsSync(join(home.dir, "webhook_subscriptions.json"))).toBe(false);
    expect(existsSync(join(home.dir, "cron", "jobs.json"))).toBe(false);
  });

  it("gateway start says so rather than 'too many arguments', and starts nothing", async () => {
    const res = await svc(home, ["gateway", "start", "--port", "--timeout", "5"]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(refused("--port <port>", "--timeout"));
    expect(res.stderr).not.toContain("too many arguments");
    expect(existsSync(join(home.dir, "gateway.pid"))).toBe(false);
  });

  it("is taken as given with '=', and a value that only starts with a dash is taken as before", async () => {
    const [setup, dashed] = await svcEach(home, [
      ["gateway", "setup", "--non-interactive", "--secret=--generate-secret"],
      ["webhook", "subscribe", "z", "--secret", "-s3cr3t", "--prompt=--deliver-only"],
    ]);
    expect(setup.code).toBe(0);
    expect(readFileSync(join(home.dir, ".env"), "utf8")).toContain("WEBHOOK_SECRET=--generate-secret");
    expect(dashed.code).toBe(0);
    const stored = JSON.parse(readFileSync(join(home.dir, "webhook_subscriptions.json"), "utf8"));
    expect(stored.z).toMatchObject({ secret: "-s3cr3t", prompt: "--deliver-only", deliver_only: false });
    const stdin = await svc(home, ["webhook", "subscribe", "s", "--secret", "-", "--description", "d"], {
      input: "from-stdin\n",
    });
    expect(stdin.code).toBe(0);
    const again = JSON.parse(readFileSync(join(home.dir, "webhook_subscriptions.json"), "utf8"));
    expect(again.s).toMatchObject({ secret: "from-stdin", description: "d" });
  });
});
