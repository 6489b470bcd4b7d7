import type { LoadedConfig } from "../../config/load.js";
import { SvcError } from "../../errors.js";
import { ownRecord, type Subscription } from "../../io/stores/subscriptions.js";
import { existingRecord } from "./storedRecord.js";
import { withSubscriptionStore } from "./subscriptionStoreFor.js";

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
export async function testTarget(loaded: LoadedConfig, name: string): Promise<TestTarget> {
  const routes = loaded.config.platforms.webhook.routes;
  const route = Object.hasOwn(routes, name) ? routes[name] : undefined;
  // The file in SVC_HOME, or with state.backend: redis the shared hash.
  const stored = () =>
    withSubscriptionStore(
      loaded,
      async (store): Promise<{ path: string; sub: Subscription | undefined }> => ({
        path: store.path,
        sub: existingRecord(store.path, name, ownRecord((await store.read()).records, name)),
      }),
    );
  if (route !== undefined) {
    // A broken (or unreachable) subscription store does not keep a config.yaml route from being tested.
    let found: { path: string; sub: Subscription | undefined } | undefined;
    try {
      found = await stored();
    } catch {
      found = undefined;
    }
    return {
      kind: "route",
      secret: route.secret,
      events: route.events,
      profile: route.profile,
      notes:
        found?.sub === undefined
          ? []
          : [
              `Note: ${found.path} has a subscription "${name}" too; the gateway answers with the config.yaml route (static routes win), so the test is signed with the route's secret and the subscription's settings do not apply`,
            ],
    };
  }
  const { path, sub } = await stored();
  if (sub === undefined)
    throw new SvcError(
      "usage",
      `no route named "${name}" in ${loaded.paths.config} and no dynamic subscription of that name in ${path} — see svc webhook list, or the routes of config.yaml`,
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
