import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { svc } from "../cli/svc.js";

/**
 * A subscription record written as its one value (`{"demo": "<secret>"}`, the secret as often as not) was
 * quoted back by svc config check and by the gateway's log at every load of the store, where the same
 * mistake in config.yaml (`demo: <secret>` under routes) is named without the value.
 */

const SECRET = "Sup3rS3cretVal12345";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

describe("a subscription record written as text", { timeout: 60_000 }, () => {
  it("is named without its text, with what to write, in the gateway's log and by svc config check", async () => {
    gw = await startTestGateway({
      config: webhookConfig({}, { secret: "global-secret-1234" }),
      files: {
        "webhook_subscriptions.json": JSON.stringify({
          demo: SECRET,
          ok: { secret: "abcdefghijklmnopqrst12", enabled: true },
        }),
      },
    });
    const file = join(gw.home.dir, "webhook_subscriptions.json");
    const named = `${file}: demo: expected a mapping, got text (not shown: it may be the route's secret) — a subscription record is a mapping of its keys: write "demo": {"secret": "...", ...} with its other keys (events, prompt, ...) beside secret, or create it with svc webhook subscribe`;
    const logged = gw.logs().find((line) => line.msg.includes("dynamic subscription demo ignored"))?.msg;
    expect(logged).toContain(named);
    expect(
      gw
        .logs()
        .map((line) => line.msg)
        .join("\n"),
    ).not.toContain(SECRET);
    const check = await svc(gw.home, ["config", "check"]);
    expect(check.stderr).toContain(named);
    expect(`${check.stdout}${check.stderr}`).not.toContain(SECRET);
  });
});
