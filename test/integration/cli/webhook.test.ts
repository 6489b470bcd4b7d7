import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { RECORDER_AGENT, recorderAgent } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, svc, svcEach } from "./svc.js";

const SECRET_LINE = /^Secret: ([0-9a-f]{64})/m;

describe("svc webhook (real subprocesses, real gateway)", { timeout: 90_000 }, () => {
  let home: TempHome;
  beforeAll(() => {
    home = tempHome();
    home.write("agent/recorder.sh", RECORDER_AGENT, 0o755);
    home.write(
      "config.yaml",
      stringify(cliConfig({ fixed: { secret: "s", prompt: "x" } }, { agent: recorderAgent() })),
    );
  });
  afterAll(async () => {
    await svc(home, ["gateway", "stop"]);
    home.cleanup();
  });
  const store = () => JSON.parse(readFileSync(join(home.dir, "webhook_subscriptions.json"), "utf8"));

  it("subscribe stores a 0600 record with a generated secret, prints the URL and the secret", async () => {
    const res = await svc(home, [
      "webhook",
      "subscribe",
      "gh",
      "--events",
      "pull_request,push",
      "--prompt",
      "PR {number}",
      "--description",
      "GitHub PRs",
      "--deliver-chat-id",
      "77",
    ]);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain("URL:    http://127.0.0.1:0/webhooks/gh");
    const secret = SECRET_LINE.exec(res.stdout)?.[1];
    const record = store().gh;
    expect(record).toMatchObject({
      events: ["pull_request", "push"],
      prompt: "PR {number}",
      description: "GitHub PRs",
      deliver: "log",
      deliver_extra: { chat_id: "77" },
      enabled: true,
      secret,
    });
    expect(record.created_at).toBe(record.updated_at);
    expect(statSync(join(home.dir, "webhook_subscriptions.json")).mode & 0o777).toBe(0o600);
  });

  it("re-subscribing updates and keeps the secret; rebinding the profile rotates it; --secret overrides", async () => {
    const before = store().gh.secret;
    await svc(home, ["webhook", "subscribe", "gh", "--prompt", "PR #{number}"]);
    expect(store().gh).toMatchObject({
      prompt: "PR #{number}",
      secret: before,
      events: ["pull_request", "push"],
    });
    const rebound = await svc(home, ["webhook", "subscribe", "gh", "--route-profile", "work"]);
    expect(rebound.stdout).toContain("(rotated)");
    const rotated = store().gh.secret;
    expect(rotated).not.toBe(before);
    expect(rotated).toMatch(/^[0-9a-f]{64}$/);
    await svc(home, [
      "webhook",
      "subscribe",
      "gh",
      "--route-profile",
      "home",
      "--secret",
      "chosen-by-receiver",
    ]);
    expect(store().gh).toMatchObject({ profile: "home", secret: "chosen-by-receiver" });
  });

  it("refuses bad names, unknown cron jobs and the startup rules of 2.2 with clear messages", async () => {
    // Refused commands write nothing, so their order does not matter.
    const [name, cron, target, direct, created] = await svcEach(home, [
      ["webhook", "subscribe", "../evil"],
      ["webhook", "subscribe", "c", "--cron-job", "ghost"],
      ["webhook", "subscribe", "d", "--deliver", "pigeon"],
      ["webhook", "subscribe", "d", "--deliver-only"],
      ["cron", "create", "--name", "triage", "--schedule", "1h", "--prompt", "p"],
    ]);
    expect(name.code).not.toBe(0);
    expect(name.stderr).toContain('"../evil" is not a valid route name');
    expect(cron.stderr).toContain("--cron-job ghost: no such cron job");
    expect(target.stderr).toContain('d: deliver: unknown target "pigeon" — use one of log,');
    expect(direct.stderr).toContain("--deliver-only needs a real delivery target");
    expect(created.code).toBe(0);
    const [both, unready] = await svcEach(home, [
      ["webhook", "subscribe", "d", "--deliver-only", "--deliver", "chat_1", "--cron-job", "triage"],
      ["webhook", "subscribe", "tg", "--deliver", "chat_1"],
    ]);
    expect(both.stderr).toContain("--deliver-only and --cron-job cannot be combined");
    expect(unready.code).toBe(0);
    expect(unready.stderr).toContain("Warning: tg: deliver: chat_1 needs platforms.telegram enabled");
    await svc(home, ["webhook", "remove", "tg"]);
    expect(Object.keys(store())).toEqual(["gh"]);
  });

  it("list shows name, events, deliver, profile, enabled and description but never a secret", async () => {
    await svc(home, ["webhook", "subscribe", "fire", "--cron-job", "triage"]);
    const list = await svc(home, ["webhook", "list"]);
    expect(list.stdout).toMatch(/^NAME\s+EVENTS\s+DELIVER\s+PROFILE\s+ENABLED\s+DESCRIPTION$/m);
    expect(list.stdout).toMatch(/^gh\s+pull_request,push\s+log\s+home\s+yes\s+GitHub PRs$/m);
    expect(list.stdout).toMatch(/^fire\s+\(all\)\s+cron:triage\s+default\s+yes/m);
    expect(list.stdout).not.toContain("chosen-by-receiver");
  });

  it("gateway start returns once /health answers, refuses a second start, status reports it", async () => {
    await svc(home, ["webhook", "subscribe", "t", "--prompt", "got {message}"]);
    const started = await svc(home, ["gateway", "start", "--timeout", "60"]);
    expect(started.code).toBe(0);
    expect(started.stdout).toMatch(/Gateway started: pid \d+, listening on 127\.0\.0\.1:\d+/);
    const [again, status] = await Promise.all([
      svc(home, ["gateway", "start", "--timeout", "60"]),
      svc(home, ["gateway", "status"]),
    ]);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain("already running");
    expect(status.stdout).toMatch(/running \(pid \d+\)[\s\S]*Health: ok/);
  });

  it("test signs with the record's secret and reaches the running gateway; a config.yaml route is not a subscription", async () => {
    const [sent, fixed, custom] = await svcEach(home, [
      ["webhook", "test", "t"],
      ["webhook", "test", "fixed"],
      ["webhook", "test", "t", "--payload", '{"message":"from --payload"}'],
    ]);
    const customId = /"delivery_id":"([^"]+)"/.exec(custom.stdout)?.[1] as string;
    const customRun = await vi.waitFor(
      () => JSON.parse(readFileSync(join(home.dir, "runs", `${customId}.json`), "utf8")),
      { timeout: 10_000, interval: 50 },
    );
    expect(customRun.prompt).toBe("got from --payload");
    expect(sent.code).toBe(0);
    expect(sent.stdout).toMatch(/^202 /m);
    const id = /"delivery_id":"([^"]+)"/.exec(sent.stdout)?.[1] as string;
    const run = await vi.waitFor(
      () => JSON.parse(readFileSync(join(home.dir, "runs", `${id}.json`), "utf8")),
      { timeout: 10_000, interval: 50 },
    );
    expect(run.prompt).toBe("got Test event from svc webhook test t");
    // test reads no route of config.yaml: a static route is refused, nothing sent.
    expect(fixed).toMatchObject({ code: 2, stdout: "" });
    expect(fixed.stderr).toContain('no dynamic subscription named "fixed"');
    // A --port this home's gateway does not listen on: nothing answers there, but the gateway runs, so
    // "start it" would be wrong; where it listens is named instead.
    const elsewhere = await svc(home, ["webhook", "test", "t", "--port", "1"]);
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toMatch(
      /runs and listens on port \d+, not 1 \(svc gateway status\): leave out --port/,
    );
    expect(elsewhere.stderr).not.toContain("svc gateway start");
  });

  it("disable → the gateway answers 404 (test exits 1); enable → 202 again; remove", async () => {
    expect((await svc(home, ["webhook", "disable", "t"])).stdout).toBe("Disabled t\n");
    const disabled = await svc(home, ["webhook", "test", "t"]);
    expect(disabled.stdout).toMatch(/^404 /m);
    expect(disabled.code).toBe(1);
    const storedAt = () =>
      JSON.parse(readFileSync(join(home.dir, "webhook_subscriptions.json"), "utf8")).t.updated_at;
    const disabledAt = storedAt();
    // A second disable prints the same line and leaves the record as it was.
    expect((await svc(home, ["webhook", "disable", "t"])).stdout).toBe("Disabled t\n");
    expect(storedAt()).toBe(disabledAt);
    expect((await svc(home, ["webhook", "enable", "t"])).stdout).toBe("Enabled t\n");
    expect(storedAt()).not.toBe(disabledAt);
    // So does a subscribe that changes nothing (no option, or the values the record has): updated_at is
    // the time of its last change.
    const enabledAt = storedAt();
    const [same, sameEvents] = await svcEach(home, [
      ["webhook", "subscribe", "t"],
      ["webhook", "subscribe", "t", "--deliver", "log"],
    ]);
    expect([same.code, sameEvents.code]).toEqual([0, 0]);
    expect(storedAt()).toBe(enabledAt);
    expect((await svc(home, ["webhook", "test", "t"])).stdout).toMatch(/^202 /m);
    expect((await svc(home, ["webhook", "remove", "t"])).stdout).toBe("Removed t\n");
    expect((await svc(home, ["webhook", "remove", "t"])).stderr).toContain(
      'no dynamic subscription named "t"',
    );
  });

  it("gateway stop, then test says the gateway is unreachable and how to start it", async () => {
    const stopped = await svc(home, ["gateway", "stop"]);
    expect(stopped.stdout).toContain("Gateway stopped");
    const [status] = await svcEach(home, [
      ["gateway", "status"],
      ["webhook", "subscribe", "t2"],
    ]);
    expect(status.code).toBe(3);
    const unreachable = await svc(home, ["webhook", "test", "t2", "--port", "1"]);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain("cannot reach the gateway");
    expect(unreachable.stderr).toContain("svc gateway start");
    expect(readdirSync(join(home.dir, "runs")).length).toBe(3);
  });

  it("says so when the webhook adapter is disabled, and how to enable it", async () => {
    const off = tempHome();
    try {
      off.write("config.yaml", stringify({ platforms: { webhook: { enabled: false } } }));
      // Judged here, its platforms would be "not enabled": with the adapter off this host serves nothing,
      // and a gateway sharing the records (state.backend: redis) has a config of its own.
      off.write(
        "webhook_subscriptions.json",
        JSON.stringify({ ops: { secret: "s", deliver: "slack", enabled: true } }),
        0o600,
      );
      for (const command of [["list"], ["deliveries"], ["deliveries", "--json"]]) {
        const res = await svc(off, ["webhook", ...command]);
        expect(res.code).toBe(0);
        expect(res.stderr).toContain("the webhook adapter is not enabled");
        expect(res.stderr).toContain("svc gateway setup --enable");
        expect(res.stderr).toContain(`${join(off.dir, "config.yaml")}: platforms.webhook.enabled is false`);
        expect(res.stderr).not.toContain("needs platforms.slack enabled");
      }
    } finally {
      off.cleanup();
    }
  });

  it("names WEBHOOK_ENABLED of the environment when that turned the adapter off (setup's .env cannot override it)", async () => {
    const off = tempHome();
    try {
      off.write("config.yaml", stringify({ platforms: { webhook: { enabled: true } } }));
      const res = await svc(off, ["webhook", "list"], { env: { WEBHOOK_ENABLED: "false" } });
      expect(res.code).toBe(0);
      expect(res.stderr).toContain("environment variable WEBHOOK_ENABLED is false");
      expect(res.stderr).toContain("set WEBHOOK_ENABLED=true in the environment");
      expect(res.stderr).not.toContain("svc gateway setup --enable");
    } finally {
      off.cleanup();
    }
  });
});
