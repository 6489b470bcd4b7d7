import type { LoadedConfig } from "../../config/load.js";
import { SvcError } from "../../errors.js";
import { ownRecord, subscriptionStore } from "../../io/stores/subscriptions.js";
import { existingRecord } from "./storedRecord.js";

/** What `svc webhook test` sends to: a config.yaml route (static routes win at the gateway) or a subscription. */
export interface TestTarget {
  readonly kind: "route" | "subscription";
  readonly secret: string | undefined;
  readonly events: readonly string[] | undefined;
  readonly profile: string | undefined;
  /** Lines for stderr: a disabled subscription, a subscription the static route shadows. */
  readonly notes: readonly string[];
}

/** The route the gateway answers `name` with, as the CLI can see it; refuses a name that is neither. */
export function testTarget(loaded: LoadedConfig, name: string): TestTarget {
  const routes = loaded.config.platforms.webhook.routes;
  const store = subscriptionStore(loaded.paths.subscriptions);
  const route = Object.hasOwn(routes, name) ? routes[name] : undefined;
  const stored = () => existingRecord(store.path, name, ownRecord(store.read().records, name));
  if (route !== undefined) {
    // A broken subscription store does not keep a config.yaml route from being tested.
    let sub: unknown;
    try {
      sub = stored();
    } catch {
      sub = undefined;
    }
    return {
      kind: "route",
      secret: route.secret,
      events: route.events,
      profile: route.profile,
      notes:
        sub === undefined
          ? []
          : [
              `Note: ${store.path} has a subscription "${name}" too; the gateway answers with the config.yaml route (static routes win), so the test is signed with the route's secret and the subscription's settings do not apply`,
            ],
    };
  }
  const sub = stored();
  if (sub === undefined)
    throw new SvcError(
      "usage",
      `no route named "${name}" in ${loaded.paths.config} and no dynamic subscription of that name in ${store.path} — see svc webhook list, or the routes of config.yaml`,
    );
  return {
    kind: "subscription",
    secret: sub.secret,
    events: sub.events,
    profile: sub.profile,
    notes: sub.enabled
      ? []
      : [`Note: ${name} is disabled; the gateway will answer 404 until svc webhook enable ${name}`],
  };
}
