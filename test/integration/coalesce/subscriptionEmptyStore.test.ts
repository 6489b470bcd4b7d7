import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { signGenericV2 } from "../../../src/cli/webhook.js";
import { gatewayPerTest, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { svc } from "../cli/svc.js";

/** An empty webhook_subscriptions.json (created with `touch`) is a store without subscriptions, not a corrupt one. */

const perTest = gatewayPerTest();
const live = perTest.live;

describe("an empty subscription store (spec 2.6)", { timeout: 60_000 }, () => {
  it("the gateway serves no subscriptions without an error; list says none; subscribe fills it and is served", async () => {
    await perTest.start({
      files: { "webhook_subscriptions.json": "" },
      config: webhookConfig({}, { rate_limit: 1000 }),
    });
    expect(await postJson(live().url("/webhooks/later"), {})).toMatchObject({ status: 404 });
    expect(
      live()
        .logs()
        .filter((l) => l.level >= 50),
    ).toEqual([]);
    const list = await svc(live().home, ["webhook", "list"]);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain("No dynamic subscriptions");
    const sub = await svc(live().home, ["webhook", "subscribe", "later", "--prompt", "p"]);
    expect(sub.stderr).toBe("");
    expect(sub.code).toBe(0);
    const secret = JSON.parse(readFileSync(join(live().home.dir, "webhook_subscriptions.json"), "utf8")).later
      .secret as string;
    const body = JSON.stringify({ a: 1 });
    const res = await postJson(
      live().url("/webhooks/later"),
      body,
      signGenericV2(secret, body, Math.floor(Date.now() / 1000)),
    );
    expect(res.status).toBe(202);
  });
});
