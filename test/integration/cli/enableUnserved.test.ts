import { afterEach, describe, expect, it } from "vitest";
import { signGenericV2 } from "../../../src/cli/webhook.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { svc, svcEach } from "./svc.js";

let gw: TestGateway;
afterEach(() => gw.stop());

describe("svc webhook enable of a record the gateway will not serve", { timeout: 90_000 }, () => {
  it("says why (invalid record, no secret at all) instead of a bare 'Enabled'; a servable one gets no warning", async () => {
    gw = await startTestGateway({ config: webhookConfig({}) });
    gw.home.write(
      "webhook_subscriptions.json",
      JSON.stringify({
        bad: { secret: "s", deliver_only: true, enabled: false },
        nosecret: { enabled: false },
        ok: { secret: "s", enabled: false },
      }),
    );
    const [bad, nosecret, ok] = await svcEach(gw.home, [
      ["webhook", "enable", "bad"],
      ["webhook", "enable", "nosecret"],
      ["webhook", "enable", "ok"],
    ]);
    expect(bad).toMatchObject({ code: 0, stdout: "Enabled bad\n" });
    expect(bad.stderr).toContain(
      "Warning: bad is enabled, but the gateway does not serve it (it answers 404): the record is invalid — fix it in ",
    );
    expect(bad.stderr).toContain(
      "webhook_subscriptions.json: bad.deliver_only: true needs a real delivery target, but deliver is log",
    );
    expect(nosecret.stderr).toContain(
      "Warning: nosecret is enabled, but the gateway does not serve it (it answers 404): it has no secret of its own and there is no global secret",
    );
    expect(nosecret.stderr).toContain("svc webhook subscribe nosecret --secret <secret>");
    expect(ok).toMatchObject({ code: 0, stdout: "Enabled ok\n", stderr: "" });
    // What the warnings say is what the gateway does.
    const post = (name: string) =>
      postJson(gw.url(`/webhooks/${name}`), "{}", signGenericV2("s", "{}", Math.floor(Date.now() / 1000)));
    expect((await post("ok")).status).toBe(202);
    expect((await post("bad")).status).toBe(404);
  });
});
