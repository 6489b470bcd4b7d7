import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { signGenericV2 } from "../../../src/cli/webhook.js";
import {
  gatewayPerTest,
  RECORDER_AGENT,
  recorderAgent,
  waitForRun,
  webhookConfig,
} from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { svc } from "../cli/svc.js";

/**
 * Spec 2.6: a record's other stored fields (identifiers, timestamps, enabled flag name) are "not shown", so a
 * hand-written record may carry its own: the route is still served, and the CLI keeps them when it rewrites.
 */

const perTest = gatewayPerTest();
const live = perTest.live;
const post = (route: string, secret: string, id: string) => {
  const body = JSON.stringify({ n: id });
  return postJson(live().url(`/webhooks/${route}`), body, {
    ...signGenericV2(secret, body, Math.floor(Date.now() / 1000)),
    "x-request-id": id,
  });
};
const stored = () => JSON.parse(readFileSync(join(live().home.dir, "webhook_subscriptions.json"), "utf8"));

describe("hand-written subscription records with fields of their own (spec 2.6)", { timeout: 60_000 }, () => {
  it("are served: an identifier, an epoch timestamp and null optional fields do not cost the route; a misspelt route property does", async () => {
    await perTest.start({
      files: {
        "agent/recorder.sh": RECORDER_AGENT,
        "webhook_subscriptions.json": JSON.stringify({
          with_id: { id: "sub_123", secret: "s1", prompt: "id {n}" },
          epoch: { secret: "s2", prompt: "epoch {n}", created_at: 1_700_000_000 },
          nulls: {
            secret: "s3",
            prompt: "nulls {n}",
            cron_job: null,
            deliver_extra: null,
            description: null,
          },
          camel: { secret: "s4", prompt: "camel {n}", createdAt: "2026-11-22T00:00:00Z" },
          // A near miss of a route property is a typo, not a field of the record's own: refused.
          typo: { secret: "s5", prompt: "typo {n}", colaesce: { key: "n" } },
        }),
      },
      config: webhookConfig({}, { rate_limit: 1000 }, { agent: recorderAgent() }),
    });
    for (const [route, secret, id] of [
      ["with_id", "s1", "r1"],
      ["epoch", "s2", "r2"],
      ["nulls", "s3", "r3"],
    ] as const) {
      expect(await post(route, secret, id)).toMatchObject({
        status: 202,
        body: { status: "accepted", route },
      });
    }
    expect((await waitForRun(live(), "r1")).prompt).toBe("id r1");
    expect((await waitForRun(live(), "r2")).prompt).toBe("epoch r2");
    expect((await waitForRun(live(), "r3")).prompt).toBe("nulls r3");
    expect((await post("camel", "s4", "r4")).status).toBe(202);
    expect(await post("typo", "s5", "r5")).toMatchObject({ status: 404, body: { error: "Unknown route" } });
    expect(
      live()
        .logs()
        .some((l) => /typo ignored: .*unknown key "colaesce"/.test(l.msg)),
    ).toBe(true);
    const notes = live()
      .logs()
      .filter((l) => l.msg.includes("ignoring fields"))
      .map((l) => l.msg);
    expect(notes).toEqual([
      "[webhook] dynamic subscription with_id: ignoring fields that are not route properties: id",
      "[webhook] dynamic subscription camel: ignoring fields that are not route properties: createdAt",
    ]);
    expect(JSON.stringify(live().logs())).not.toContain('"s1"');
  });

  it("svc webhook subscribe, disable and enable keep a record's own fields and its timestamp as written", async () => {
    await perTest.start({
      files: {
        "webhook_subscriptions.json": JSON.stringify({
          mine: { id: "sub_9", secret: "s9", prompt: "old", created_at: 1_700_000_000 },
        }),
      },
      config: webhookConfig({}, { rate_limit: 1000 }),
    });
    const update = await svc(live().home, ["webhook", "subscribe", "mine", "--prompt", "new {n}"]);
    expect(update.code).toBe(0);
    expect(stored().mine).toMatchObject({
      id: "sub_9",
      secret: "s9",
      prompt: "new {n}",
      created_at: 1_700_000_000,
    });
    expect((await svc(live().home, ["webhook", "disable", "mine"])).code).toBe(0);
    expect((await post("mine", "s9", "d1")).status).toBe(404);
    expect((await svc(live().home, ["webhook", "enable", "mine"])).code).toBe(0);
    expect(stored().mine).toMatchObject({ id: "sub_9", enabled: true });
    expect((await post("mine", "s9", "d2")).status).toBe(202);
    const list = await svc(live().home, ["webhook", "list"]);
    expect(list.stdout).toMatch(/^mine\s+\(all\)\s+log\s+default\s+yes/m);
  });

  it("a record without a secret falls back to the global secret, as a static route does (spec 2.2, 2.6)", async () => {
    await perTest.start({
      files: {
        "agent/recorder.sh": RECORDER_AGENT,
        "webhook_subscriptions.json": JSON.stringify({ shared: { prompt: "shared {n}" } }),
      },
      config: webhookConfig({}, { rate_limit: 1000, secret: "global-secret" }, { agent: recorderAgent() }),
    });
    expect((await post("shared", "other-secret", "g1")).status).toBe(401);
    expect(await post("shared", "global-secret", "g2")).toMatchObject({
      status: 202,
      body: { route: "shared" },
    });
    expect((await waitForRun(live(), "g2")).prompt).toBe("shared g2");
    // The CLI signs its test event with the global secret too, and an update keeps the record without one.
    const test = await svc(live().home, ["webhook", "test", "shared", "--port", String(live().gateway.port)]);
    expect(test.stdout).toContain("202");
    const update = await svc(live().home, ["webhook", "subscribe", "shared", "--description", "d"]);
    expect(update.code).toBe(0);
    expect(update.stdout).toContain("Secret: none of its own: the global secret");
    expect(stored().shared.secret).toBeUndefined();
    expect((await post("shared", "global-secret", "g3")).status).toBe(202);
  });

  it("without a global secret such a record is not served", async () => {
    await perTest.start({
      files: { "webhook_subscriptions.json": JSON.stringify({ shared: { prompt: "p" } }) },
      config: webhookConfig({}, { rate_limit: 1000 }),
    });
    expect(await post("shared", "anything", "n1")).toMatchObject({
      status: 404,
      body: { error: "Unknown route" },
    });
    const test = await svc(live().home, ["webhook", "test", "shared", "--port", String(live().gateway.port)]);
    expect(test.code).not.toBe(0);
    expect(test.stderr).toContain("shared has no secret of its own and there is no global secret");
  });
});
