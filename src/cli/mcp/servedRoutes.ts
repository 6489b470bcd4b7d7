import type { RunsView } from "../../agent/routeTools.js";
import type { LoadedConfig } from "../../config/load.js";
import { DEFAULT_PROFILE } from "../../config/paths.js";
import { parseSubscription } from "../../io/stores/subscriptions.js";
import { withSubscriptionStore } from "../webhook/subscriptionStoreFor.js";

/**
 * The routes a gateway serves that run as the profile `loaded` is for (`--profile`; the default one without
 * it), for `svc mcp tools`' note on which runs get a server's tools: the static routes, then the enabled,
 * valid subscriptions (`svc webhook subscribe`; a static route of the same name wins, as in the gateway). A
 * route of another profile runs with that profile's connections, not these. A store that cannot be read adds
 * none (svc webhook commands report it).
 */
export async function servedRoutes(loaded: LoadedConfig): Promise<RunsView["routes"]> {
  const profile = loaded.paths.profile ?? DEFAULT_PROFILE;
  const routes = await allServedRoutes(loaded);
  return Object.fromEntries(
    Object.entries(routes).filter(([, route]) => (route.profile ?? DEFAULT_PROFILE) === profile),
  );
}

async function allServedRoutes(loaded: LoadedConfig): Promise<RunsView["routes"]> {
  const routes: Record<string, RunsView["routes"][string]> = { ...loaded.config.platforms.webhook.routes };
  try {
    const { path, records } = await withSubscriptionStore(loaded, async (store) => ({
      path: store.path,
      records: (await store.read()).records,
    }));
    for (const [name, raw] of Object.entries(records)) {
      if (Object.hasOwn(routes, name)) continue;
      const parsed = parseSubscription(path, name, raw);
      if (parsed.ok && parsed.value.enabled) routes[name] = parsed.value;
    }
  } catch {
    // an unreadable store (or an unreachable Redis) is reported by svc webhook commands
  }
  return routes;
}
