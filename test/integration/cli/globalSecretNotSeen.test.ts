import { afterEach, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

/**
 * A route or subscription without a secret of its own, served with WEBHOOK_SECRET set only in the running gateway's
 * environment (a systemd unit, a container): the CLI, which does not see that environment, said that
 * the gateway does not serve the route, though the history shows it just accepted a delivery there.
 */
it("svc webhook redeliver without a secret in sight says the command cannot see the gateway's environment", async () => {
  home = tempHome();
  home.write(
    "config.yaml",
    stringify({ platforms: { webhook: { enabled: true, host: "127.0.0.1", routes: { alpha: {} } } } }),
  );
  home.write(
    "deliveries/history.jsonl",
    `${JSON.stringify({ kind: "request", id: "env-only-1", at: new Date().toISOString(), route: "alpha", status: 202, outcome: "accepted", content_type: "application/json", payload_encoding: "utf8", payload: '{"n":1}' })}\n`,
    0o600,
  );
  const result = await svc(home, ["webhook", "redeliver", "env-only-1", "--port", "9"]);
  expect(result).toMatchObject({ code: 2, stdout: "" });
  expect(result.stderr).not.toContain("the gateway does not serve it");
  expect(result.stderr).toContain(
    `route alpha has no secret of its own and this command sees no global secret (platforms.webhook.secret in ${home.dir}/config.yaml, or WEBHOOK_SECRET in its environment or ${home.dir}/.env) — a WEBHOOK_SECRET set only in the running gateway's environment (a systemd unit, a container) cannot be seen from here: run the command with it set (WEBHOOK_SECRET=<secret> svc webhook redeliver env-only-1)`,
  );
});

it("svc webhook test of a subscription without a secret in sight does not say for sure that the gateway does not serve it", async () => {
  home = tempHome();
  home.write("config.yaml", stringify({ platforms: { webhook: { enabled: true, host: "127.0.0.1" } } }));
  home.write("webhook_subscriptions.json", JSON.stringify({ bare: { enabled: true } }), 0o600);
  const result = await svc(home, ["webhook", "test", "bare", "--port", "9"]);
  expect(result).toMatchObject({ code: 2, stdout: "" });
  expect(result.stderr).toContain(
    `bare has no secret of its own and there is no global secret (platforms.webhook.secret in ${home.dir}/config.yaml, or WEBHOOK_SECRET in this command's environment or ${home.dir}/.env) — unless the running gateway has WEBHOOK_SECRET in its own environment (a systemd unit, a container), which this command cannot see (run it with WEBHOOK_SECRET=<secret> set then), the gateway does not serve it; set one with svc webhook subscribe bare --secret <secret>`,
  );
});
