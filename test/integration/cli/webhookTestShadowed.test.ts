import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

describe("svc webhook test on a subscription that a config.yaml route of the same name shadows (spec 4.3 rule 2)", () => {
  let home: TempHome;
  afterEach(() => home.cleanup());

  it("says the static route answers instead, so a 401 or its settings are not a mystery", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(webhookConfig({ dup: { secret: "static-secret" } })));
    home.write(
      "webhook_subscriptions.json",
      JSON.stringify({ dup: { secret: "dynamic-secret", enabled: true } }),
    );
    const res = await svc(home, ["webhook", "test", "dup", "--port", "1"]);
    expect(res.stderr).toContain('config.yaml defines a static route "dup" too; the gateway answers with it');

    home.write(
      "webhook_subscriptions.json",
      JSON.stringify({ solo: { secret: "dynamic-secret", enabled: true } }),
    );
    const alone = await svc(home, ["webhook", "test", "solo", "--port", "1"]);
    expect(alone.stderr).not.toContain("defines a static route");
  });
});
