import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc, svcEach } from "./svc.js";

let home: TempHome;
beforeAll(() => {
  home = tempHome();
});
afterAll(() => home.cleanup());

describe("an option that keeps one value, given twice", { timeout: 90_000 }, () => {
  it("is refused (exit 2) naming the option, not its values, and nothing is created", async () => {
    const [cron, subscribe] = await svcEach(home, [
      ["cron", "create", "--name", "first", "--name", "second", "--schedule", "1h", "--prompt", "p"],
      ["webhook", "subscribe", "w", "--secret", "s3cr3t-one", "--secret=s3cr3t-two"],
    ]);
    expect(cron.code).toBe(2);
    expect(cron.stderr).toContain("error: option '--name <name>' given more than once — give it once");
    expect(subscribe.code).toBe(2);
    expect(subscribe.stderr).toContain("error: option '--secret <secret>' given more than once");
    for (const r of [cron, subscribe]) expect(`${r.stdout}${r.stderr}`).not.toMatch(/s3cr3t|first|second/);
    expect(existsSync(join(home.dir, "cron", "jobs.json"))).toBe(false);
    expect(existsSync(join(home.dir, "webhook_subscriptions.json"))).toBe(false);
  });

  it("an option given with its --no- opposite is refused (exit 2) naming both, and nothing is created", async () => {
    const [only, cron] = await svcEach(home, [
      ["webhook", "subscribe", "w2", "--deliver", "telegram", "--deliver-only", "--no-deliver-only"],
      ["webhook", "subscribe", "w3", "--no-cron-job", "--cron-job", "nightly"],
    ]);
    expect(only.code).toBe(2);
    expect(only.stderr).toContain(
      "error: options '--deliver-only' and '--no-deliver-only' both given — give one (only the last would count)",
    );
    expect(cron.code).toBe(2);
    expect(cron.stderr).toContain("error: options '--cron-job' and '--no-cron-job' both given — give one");
    expect(existsSync(join(home.dir, "webhook_subscriptions.json"))).toBe(false);
  });

  it("options whose help says they repeat still add up", async () => {
    const res = await svc(home, [
      "webhook",
      "subscribe",
      "w",
      "--events",
      "push",
      "--events",
      "pull_request",
      "--deliver-extra",
      "a=1",
      "--deliver-extra",
      "b=2",
    ]);
    expect(res.code).toBe(0);
    const stored = JSON.parse(readFileSync(join(home.dir, "webhook_subscriptions.json"), "utf8"));
    expect(JSON.stringify(stored)).toContain('"events":["push","pull_request"]');
    expect(JSON.stringify(stored)).toMatch(/"deliver_extra":\{"a":"1","b":"2"\}/);
  });
});
