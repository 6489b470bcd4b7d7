import { inProfile } from "../config/paths.js";
import type { Route } from "../config/sections/webhook.js";
import { resolveScript } from "../io/scripts.js";
import { type CronStore, findJob } from "../io/stores/cronStore.js";
import type { RouteTable } from "./routes.js";

export interface ReferenceDeps {
  readonly configFile: string;
  scriptsDir(profile: string): string;
  cronStore(profile: string): { readonly store: CronStore; readonly path: string };
}

/** A route as its references are checked: `at` names it in a warning (`<file>: <key path>`). */
export interface ReferringRoute {
  readonly at: string;
  readonly route: Pick<Route, "script" | "cron_job">;
  readonly profile: string;
}

/**
 * Static routes that name a script or a cron job that is not there: the gateway still starts (the file
 * or job may be added while it runs), but says so now rather than only when the first event is dropped.
 */
export function missingReferenceWarnings(table: RouteTable, deps: ReferenceDeps): Promise<string[]> {
  return referenceWarnings(
    [...table.staticRoutes].map(([name, { route, profile }]) => ({
      at: `${deps.configFile}: platforms.webhook.routes.${name}`,
      route,
      profile,
    })),
    deps,
  );
}

/** The warnings of `missingReferenceWarnings` for any routes, such as the subscriptions `svc config check` reads. */
export async function referenceWarnings(
  routes: Iterable<ReferringRoute>,
  deps: Omit<ReferenceDeps, "configFile">,
): Promise<string[]> {
  const warnings: string[] = [];
  for (const { at, route, profile } of routes) {
    if (route.script !== undefined) {
      const scriptsDir = deps.scriptsDir(profile);
      const found = await resolveScript(scriptsDir, route.script);
      if ("why" in found) {
        warnings.push(
          `${at}.script: ${route.script} — ${found.why} (scripts live in ${scriptsDir}${inProfile(profile)}); until it is there every event on this route is ignored`,
        );
      }
    }
    if (route.cron_job !== undefined) {
      const { store, path } = deps.cronStore(profile);
      try {
        if (findJob(store.read().records, route.cron_job) === undefined)
          warnings.push(
            `${at}.cron_job: ${route.cron_job} — no such job in ${path}${inProfile(profile)} (\`svc cron list\`); until it exists every event on this route is dropped`,
          );
      } catch (err) {
        warnings.push(
          `${at}.cron_job: ${route.cron_job} — ${path} cannot be read: ${(err as Error).message}${inProfile(profile)}; until it can, every event on this route is answered 503 (the sender retries)`,
        );
      }
    }
  }
  return warnings;
}
