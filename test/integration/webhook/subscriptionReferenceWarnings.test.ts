import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * Spec 2.6: a subscription has the capabilities of a static route. A config.yaml route whose script, cron
 * job or in_file list is not there is named at WARN at start (its events are ignored or dropped until it
 * is); a subscription naming one was served without a word until its first event, though `svc config
 * check` names it. Each load of the store now names it too, with the same line.
 */

const OPEN = "INSECURE_NO_AUTH";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

const warnings = (gateway: TestGateway) =>
  gateway
    .logs()
    .filter((l) => l.level === 40)
    .map((l) => l.msg);

describe("a subscription's script, cron job and in_file lists", () => {
  it("are looked for at each load of the store and named at WARN when not there", async () => {
    gw = await startTestGateway({
      config: webhookConfig({ shadowed: { secret: OPEN } }),
      files: {
        "scripts/here.sh": "echo '{}'\n",
        "webhook_subscriptions.json": JSON.stringify({
          missing: {
            secret: OPEN,
            script: "nope.py",
            cron_job: "ghost",
            filters: [{ field: "a", in_file: "lists/none.txt" }],
          },
          fine: { secret: OPEN, script: "here.sh" },
          // A config.yaml route of this name wins: this record is said not to be served, nothing more.
          shadowed: { secret: OPEN, script: "nope.py" },
        }),
      },
    });
    const running = gw;
    const at = (relative: string) => join(running.home.dir, relative);
    const store = at("webhook_subscriptions.json");
    await vi.waitFor(
      () =>
        expect(warnings(running).filter((m) => m.startsWith(`[webhook] ${store}: `))).toEqual([
          `[webhook] ${store}: missing.script: nope.py — script not found (scripts live in ${at("scripts")}); until it is there every event on this route is ignored`,
          `[webhook] ${store}: missing.filters[0].in_file: lists/none.txt — ${at("lists/none.txt")} cannot be used (ENOENT: no such file or directory, stat '${at("lists/none.txt")}'); until it can, this filter does not match and the events it decides are ignored`,
          `[webhook] ${store}: missing.cron_job: ghost — no such job in ${at("cron/jobs.json")} (\`svc cron list\`); until it exists every event on this route is dropped`,
        ]),
      { timeout: 10_000 },
    );

    // A record written while the gateway runs is judged at the load its first request makes.
    running.home.write(
      "webhook_subscriptions.json",
      JSON.stringify({
        fine: { secret: OPEN, script: "here.sh" },
        late: { secret: OPEN, script: "gone.sh" },
      }),
      0o600,
    );
    expect((await postJson(running.url("/webhooks/late"), {})).body).toEqual({
      status: "ignored",
      reason: "script",
    });
    await vi.waitFor(
      () =>
        expect(warnings(running)).toContain(
          `[webhook] ${store}: late.script: gone.sh — script not found (scripts live in ${at("scripts")}); until it is there every event on this route is ignored`,
        ),
      { timeout: 10_000 },
    );
    expect(warnings(running).some((m) => m.includes("fine.script") || m.includes("shadowed.script"))).toBe(
      false,
    );
  });
});
