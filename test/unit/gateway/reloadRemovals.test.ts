import { describe, expect, it } from "vitest";
import { configSchema } from "../../../src/config/schema.js";
import { reloadRemovals } from "../../../src/gateway/reloadRemovals.js";

const FILE = "/home/u/.svc/config.yaml";
const config = (routes: Record<string, unknown>, multiplex = false) =>
  configSchema.parse({
    gateway: { multiplex_profiles: multiplex },
    platforms: { webhook: { enabled: true, host: "127.0.0.1", routes } },
  });
const bound = { secret: "s3cret-value", profile: "work" };
const unbound = { secret: "s3cret-value" };

describe("what a reload takes away, named at WARN", () => {
  it("nothing when every route keeps its name and its URLs", () => {
    expect(reloadRemovals(config({ a: bound, b: unbound }), config({ a: bound, b: unbound }), FILE)).toBe(
      undefined,
    );
    // Without multiplexing a route's profile does not decide its URL.
    expect(reloadRemovals(config({ a: bound }), config({ a: { ...bound, profile: "home" } }), FILE)).toBe(
      undefined,
    );
  });

  it("a route whose URL moved (multiplexing turned off, as by a file cut before its gateway section): where it answers now, and the URL that answers 404", () => {
    const line = reloadRemovals(
      config({ a: bound, b: unbound }, true),
      config({ a: bound, b: unbound }),
      FILE,
    );
    expect(line).toBe(
      `[gateway] the reload of ${FILE} moved routes platforms.webhook.routes.a to /webhooks/a, no longer at /p/work/webhooks/a, and platforms.webhook.routes.b to /webhooks/b, no longer at /p/default/webhooks/b (a sender still posting to the old URL gets 404: gateway.multiplex_profiles and the route's profile decide it) — if that was not meant (a file saved or copied while the gateway read it can be cut short and still parse), put them back in ${FILE} and reload again (SIGHUP, or svc mcp reload)`,
    );
    expect(line).not.toContain("s3cret-value");
  });

  it("a route given another profile under multiplexing, beside a route removed: both named", () => {
    const line = reloadRemovals(
      config({ a: bound, gone: unbound }, true),
      config({ a: { ...bound, profile: "home" } }, true),
      FILE,
    );
    expect(line).toContain(
      "removed route platforms.webhook.routes.gone (it answers 404 unless a subscription of that name serves it) and moved route platforms.webhook.routes.a to /p/home/webhooks/a, no longer at /p/work/webhooks/a (",
    );
  });

  it("multiplexing turned on or off moves the subscriptions too (their profile is their record's): each named, unless a route of config.yaml shadows it now", () => {
    const subscriptions = [
      { name: "sub", profile: "work" },
      { name: "plain", profile: "default" },
      { name: "a", profile: "home" },
    ];
    const off = reloadRemovals(config({ a: bound }, true), config({ a: bound }), FILE, subscriptions);
    expect(off).toBe(
      `[gateway] the reload of ${FILE} moved routes platforms.webhook.routes.a to /webhooks/a, no longer at /p/work/webhooks/a, and subscription sub to /webhooks/sub, no longer at /p/work/webhooks/sub, and subscription plain to /webhooks/plain, no longer at /p/default/webhooks/plain (a sender still posting to the old URL gets 404: gateway.multiplex_profiles and the route's profile decide it) — if that was not meant (a file saved or copied while the gateway read it can be cut short and still parse), put them back in ${FILE} and reload again (SIGHUP, or svc mcp reload)`,
    );
    // Turned on, an unbound subscription keeps /webhooks/<name>: only the bound one moved.
    const on = reloadRemovals(config({}), config({}, true), FILE, subscriptions.slice(0, 2));
    expect(on).toContain(
      "moved route subscription sub to /p/work/webhooks/sub, no longer at /webhooks/sub (",
    );
    expect(on).not.toContain("plain");
    // Multiplexing unchanged: a subscription's URL does not move with config.yaml.
    expect(reloadRemovals(config({}, true), config({}, true), FILE, subscriptions)).toBe(undefined);
  });
});
