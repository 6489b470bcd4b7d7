import { afterEach, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { svc } from "./svc.js";

/**
 * An enabled subscription with no secret of its own, and no global secret, answers 404: every tool says
 * so, instead of listing it as a live route.
 */

let gw: TestGateway;
afterEach(() => gw.stop());

const SUBSCRIPTIONS = JSON.stringify({
  nosecret: { prompt: "p", enabled: true },
  ok: { secret: "INSECURE_NO_AUTH", prompt: "p", enabled: true },
  grouped: { secret: "s", prompt: "p", enabled: true, coalesce: { key: "n" } },
});

describe("an enabled subscription that cannot be served", { timeout: 60_000 }, () => {
  it("is named by the gateway's start, svc config check and svc webhook list, and answers 404", async () => {
    gw = await startTestGateway({
      config: webhookConfig({ fixed: { secret: "t", prompt: "x" } }),
      files: { "webhook_subscriptions.json": SUBSCRIPTIONS },
    });
    const listening = gw.logs().find((line) => line.msg.includes("Listening on"));
    expect(listening?.msg).toMatch(/routes: fixed, ok, grouped$/);
    const warned = gw.logs().find((line) => line.msg.includes("is enabled but not served"));
    expect(warned?.msg).toContain("dynamic subscription nosecret is enabled but not served (404)");
    expect(warned?.msg).toContain("no secret of its own and no global secret");
    expect((await postJson(gw.url("/webhooks/nosecret"), {})).status).toBe(404);
    expect((await postJson(gw.url("/webhooks/ok"), {})).status).toBe(202);

    const check = await svc(gw.home, ["config", "check"]);
    expect(check.code).toBe(0);
    expect(check.stderr).toContain("nosecret is enabled but not served (404): it has no secret of its own");
    expect(check.stderr).not.toContain("ok is enabled but not served");

    const list = await svc(gw.home, ["webhook", "list"]);
    const row = (name: string) => list.stdout.split("\n").find((line) => line.startsWith(`${name} `));
    expect(row("nosecret")).toContain("yes, not served");
    expect(row("ok")).not.toContain("not served");
    expect(list.stderr).toContain("Note: nosecret is enabled but not served (404)");
  });

  it("a hand-written coalesce that an option cannot combine with is named with its file", async () => {
    gw = await startTestGateway({
      config: webhookConfig({}),
      files: { "webhook_subscriptions.json": SUBSCRIPTIONS },
    });
    const result = await svc(gw.home, ["webhook", "subscribe", "grouped", "--cron-job", "nightly"]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("webhook_subscriptions.json; no option sets it");
    expect(result.stderr).toContain("remove coalesce from the file, or leave out --cron-job");
  });
});
