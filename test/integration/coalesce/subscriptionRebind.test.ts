import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { signGenericV2 } from "../../../src/cli/webhook.js";
import { gatewayPerTest, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { svc } from "../cli/svc.js";

/** Spec 4.3 item 3 against a running gateway: the CLI edits the store, the gateway serves it without restart. */

const perTest = gatewayPerTest();
const live = perTest.live;
const secretOf = (name: string) =>
  JSON.parse(readFileSync(join(live().home.dir, "webhook_subscriptions.json"), "utf8"))[name]
    .secret as string;
const subscribe = async (...args: string[]) => {
  const res = await svc(live().home, ["webhook", "subscribe", ...args]);
  expect(res.stderr).toBe("");
  expect(res.code).toBe(0);
  return res.stdout;
};
const post = (path: string, secret: string) => {
  const body = JSON.stringify({ n: 1 });
  return postJson(live().url(path), body, signGenericV2(secret, body, Math.floor(Date.now() / 1000)));
};

describe("rebinding a subscription with --route-profile (spec 4.3 item 3, 4.1)", { timeout: 60_000 }, () => {
  it("moves the route to the new profile's path and rotates the secret: the old secret and the old path stop working", async () => {
    await perTest.start({
      config: webhookConfig({}, { rate_limit: 1000 }, { gateway: { multiplex_profiles: true } }),
    });
    await subscribe("hook", "--prompt", "p {n}");
    const first = secretOf("hook");
    expect((await post("/webhooks/hook", first)).status).toBe(202);

    const out = await subscribe("hook", "--route-profile", "work");
    const second = secretOf("hook");
    expect(second).not.toBe(first);
    // The Secret line holds the secret alone (a script takes the rest of the line); the rotation is said apart.
    expect(out.split("\n")).toContain(`Secret: ${second}`);
    expect(out).toContain("The secret changed (rotated)");
    expect(out).toContain("/p/work/webhooks/hook");
    expect(await post("/webhooks/hook", second)).toMatchObject({
      status: 404,
      body: { error: "Unknown route" },
    });
    expect((await post("/p/work/webhooks/hook", first)).status).toBe(401);
    expect((await post("/p/work/webhooks/hook", second)).status).toBe(202);

    // Back to the default profile is a rebinding too.
    await subscribe("hook", "--route-profile", "default");
    const third = secretOf("hook");
    expect(third).not.toBe(second);
    expect((await post("/p/work/webhooks/hook", third)).status).toBe(404);
    expect((await post("/webhooks/hook", third)).status).toBe(202);
  });

  it("naming the profile a route is already bound to is not a rebinding: the secret stays (an unbound route is the default profile's)", async () => {
    await perTest.start({
      config: webhookConfig({}, { rate_limit: 1000 }, { gateway: { multiplex_profiles: true } }),
    });
    await subscribe("plain", "--prompt", "p");
    const secret = secretOf("plain");
    const out = await subscribe("plain", "--route-profile", "default");
    expect(secretOf("plain")).toBe(secret);
    expect(out).not.toContain("rotated");
    expect((await post("/webhooks/plain", secret)).status).toBe(202);

    await subscribe("bound", "--route-profile", "work");
    const bound = secretOf("bound");
    await subscribe("bound", "--route-profile", "work", "--prompt", "changed");
    expect(secretOf("bound")).toBe(bound);
    expect((await post("/p/work/webhooks/bound", bound)).status).toBe(202);
  });

  it("--secret on a rebinding sets the chosen value instead of a rotated one", async () => {
    await perTest.start({
      config: webhookConfig({}, { rate_limit: 1000 }, { gateway: { multiplex_profiles: true } }),
    });
    await subscribe("chosen", "--prompt", "p");
    await subscribe("chosen", "--route-profile", "work", "--secret", "receiver-chosen-value");
    expect(secretOf("chosen")).toBe("receiver-chosen-value");
    expect((await post("/p/work/webhooks/chosen", "receiver-chosen-value")).status).toBe(202);
  });
});
