import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postSignedIssue } from "../../helpers/http.js";
import { svc } from "./svc.js";

/**
 * Spec: `subscribe <name>` creates a dynamic subscription; a static route of the same name always wins over
 * it. `svc webhook subscribe ci` with a config.yaml route `ci` was refused (exit 2), so the two could not be
 * set up side by side through the CLI at all.
 */
describe("svc webhook subscribe <name> of a config.yaml route's name (spec 4.3 rule 2)", () => {
  let gw: TestGateway | undefined;
  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
  });

  it("creates the subscription with a warning that the static route wins; the gateway checks the static route's secret", {
    timeout: 60_000,
  }, async () => {
    const staticSecret = "static-ci-secret-7731";
    gw = await startTestGateway({ config: webhookConfig({ ci: { secret: staticSecret } }) });
    const { home } = gw;
    const subscribed = await svc(home, ["webhook", "subscribe", "ci"]);
    expect(subscribed.code).toBe(0);
    expect(subscribed.stdout).toMatch(/^Subscribed ci\nURL: {4}http:\/\/127\.0\.0\.1:\d+\/webhooks\/ci\n/);
    expect(subscribed.stderr).toContain(
      `Warning: config.yaml also defines a static route "ci"; the static route wins over this subscription while it is there: requests to ci are answered by that route and checked against its secret, not this subscription's, until the route is removed from ${join(home.dir, "config.yaml")}`,
    );
    const dynamicSecret = /^Secret: (\S+)$/m.exec(subscribed.stdout)?.[1] ?? "";
    const stored = JSON.parse(readFileSync(join(home.dir, "webhook_subscriptions.json"), "utf8"));
    expect(stored.ci.secret).toBe(dynamicSecret);
    expect(dynamicSecret).toMatch(/^[0-9a-f]{64}$/);

    const url = gw.url("/webhooks/ci");
    const byStatic = await postSignedIssue(url, staticSecret, { action: "opened" }, "shadow-1");
    expect(byStatic.status).toBe(202);
    const byDynamic = await postSignedIssue(url, dynamicSecret, { action: "opened" }, "shadow-2");
    expect(byDynamic.status).toBe(401);

    const listed = await svc(home, ["webhook", "list"]);
    expect(listed.stdout.split("\n")[1]).toMatch(/^ci\s.*\syes, not served\s*$/);
    expect(listed.stderr).toContain("Note: ci: config.yaml defines a static route of that name, which wins");
  });

  it("with multiplexing on and the route bound to another profile, says the subscription is not served and its URL answers 404", {
    timeout: 60_000,
  }, async () => {
    const staticSecret = "static-ra-secret-6613";
    gw = await startTestGateway({
      config: webhookConfig(
        { ra: { secret: staticSecret, profile: "alpha" } },
        {},
        { gateway: { multiplex_profiles: true } },
      ),
      files: { "profiles/alpha/.env": "", "profiles/beta/.env": "" },
    });
    const { home } = gw;
    const subscribed = await svc(home, ["webhook", "subscribe", "ra", "--route-profile", "beta"]);
    expect(subscribed.code).toBe(0);
    expect(subscribed.stdout).toMatch(
      /^Subscribed ra\nURL: {4}http:\/\/127\.0\.0\.1:\d+\/p\/beta\/webhooks\/ra\n/,
    );
    expect(subscribed.stderr).toContain(
      `Warning: config.yaml also defines a static route "ra", which wins over this subscription while it is there: bound to profile alpha, it answers at /p/alpha/webhooks/ra (gateway.multiplex_profiles is on), so this subscription is not served and its URL /p/beta/webhooks/ra answers 404 Unknown route whatever the secret, until the route is removed from ${join(home.dir, "config.yaml")}`,
    );
    expect(subscribed.stderr).not.toContain("checked against its secret");
    const dynamicSecret = /^Secret: (\S+)$/m.exec(subscribed.stdout)?.[1] ?? "";
    expect(dynamicSecret).toMatch(/^[0-9a-f]{64}$/);
    // As the warning says: the subscription's URL is not served whatever the secret; the route answers at its own.
    for (const [secret, id] of [
      [dynamicSecret, "mx-1"],
      [staticSecret, "mx-2"],
    ] as const)
      expect(
        (await postSignedIssue(gw.url("/p/beta/webhooks/ra"), secret, { action: "opened" }, id)).status,
      ).toBe(404);
    const byStatic = await postSignedIssue(
      gw.url("/p/alpha/webhooks/ra"),
      staticSecret,
      { action: "opened" },
      "mx-3",
    );
    expect(byStatic.status).toBe(202);
  });
});
