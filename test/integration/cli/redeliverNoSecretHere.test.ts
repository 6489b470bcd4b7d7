import { afterEach, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

/**
 * A route without a secret of its own, served with WEBHOOK_SECRET set only in the running gateway's
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
