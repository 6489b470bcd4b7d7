import type { LoadedConfig } from "../../config/load.js";
import { inProfile, profileFlag, svcPaths } from "../../config/paths.js";
import type { Route } from "../../config/sections/webhook.js";
import { SvcError } from "../../errors.js";
import { jobRef, lookupJob } from "../../io/stores/cronJobRecord.js";
import { cronStore } from "../../io/stores/cronStore.js";
import { ownRecord, type Subscription } from "../../io/stores/subscriptions.js";
import { unusableCronStore } from "../../io/stores/unusableCronStore.js";
import { type Address, elsewhereRoute } from "./address.js";
import { failingTargetNotes } from "./checks.js";
import { meantSubscription } from "./meantSubscription.js";
import { notServed } from "./notServed.js";
import type { AnsweringRoute } from "./postToGateway.js";
import { existingRecord } from "./storedRecord.js";
import { withSubscriptionStore } from "./subscriptionStoreFor.js";

/** What a signed CLI request goes to: a config.yaml route (static routes win at the gateway) or a subscription. */
export interface TestTarget {
  readonly secret: string | undefined;
  readonly events: readonly string[] | undefined;
  readonly profile: string | undefined;
  /** False for a disabled subscription (the gateway answers it 404). */
  readonly enabled: boolean;
  /** When the subscription was last written (ms; its `updated_at`); undefined for a config.yaml route. */
  readonly changedAt?: number;
  /** What decides how long the gateway may take to answer (a script, a direct delivery). */
  readonly route: AnsweringRoute;
  /**
   * Why the subscription store could not be read, for a config.yaml route sent to all the same (Redis
   * unreachable): the gateway's answer may come of the same cause.
   */
  readonly storeUnread?: string;
  /** Lines for stderr: a disabled subscription, a subscription the static route shadows. */
  readonly notes: readonly string[];
  /**
   * The note for an enabled subscription the gateway bound at `running` (`runningAddress`) would not serve
   * (INSECURE_NO_AUTH off loopback: it answers 404), as `svc webhook list` words it; undefined otherwise.
   */
  unservedNote(running: Address): string | undefined;
}

/** The subscription `name` in the file in SVC_HOME (with state.backend: redis, the shared hash). */
function storedSubscription(
  loaded: LoadedConfig,
  name: string,
): Promise<{ path: string; sub: Subscription | undefined; raw: unknown; names: string[] }> {
  return withSubscriptionStore(loaded, async (store) => {
    const { records } = await store.read();
    const raw = ownRecord(records, name);
    return {
      path: store.path,
      sub: existingRecord(store.path, name, raw),
      raw,
      names: Object.keys(records),
    };
  });
}

function subscriptionTarget(
  sub: Subscription,
  name: string,
  notes: readonly string[],
  unserved: (running: Address) => string | undefined,
): TestTarget {
  return {
    secret: sub.secret,
    events: sub.events,
    profile: sub.profile,
    enabled: sub.enabled,
    ...(sub.updated_at === undefined ? {} : { changedAt: new Date(sub.updated_at).getTime() }),
    route: sub,
    notes: [
      ...(sub.enabled
        ? []
        : [`Note: ${name} is disabled; the gateway will answer 404 until svc webhook enable ${name}`]),
      ...notes,
    ],
    unservedNote(running) {
      if (!sub.enabled) return undefined;
      const why = unserved(running);
      return why === undefined ? undefined : `Note: ${name} is enabled but not served (404): ${why}`;
    },
  };
}

/**
 * Where a signed request for `name` goes. `subscriptions`: the dynamic subscription only, as
 * `svc webhook test` reads no route of config.yaml (a static route of the same name, which the gateway
 * answers with, is only noted). `routes and subscriptions`: the route the gateway answers `name` with
 * (`svc webhook redeliver`, whose recorded event may have come to either). Refuses a name it cannot send to.
 */
export async function testTarget(
  loaded: LoadedConfig,
  name: string,
  scope: "subscriptions" | "routes and subscriptions",
): Promise<TestTarget> {
  const routes = loaded.config.platforms.webhook.routes;
  const route = Object.hasOwn(routes, name) ? routes[name] : undefined;
  if (route !== undefined && scope === "routes and subscriptions") {
    // A broken (or unreachable) subscription store does not keep a config.yaml route from being reached.
    let storeUnread: string | undefined;
    const found = await storedSubscription(loaded, name).catch((err: unknown) => {
      storeUnread = err instanceof Error ? err.message : String(err);
      return undefined;
    });
    return {
      ...(storeUnread === undefined ? {} : { storeUnread }),
      secret: route.secret,
      events: route.events,
      profile: route.profile,
      enabled: true,
      route,
      unservedNote: () => undefined,
      notes: [
        ...(found?.sub === undefined
          ? []
          : [
              `Note: ${found.path} has a subscription "${name}" too; the gateway answers with the config.yaml route (static routes win), so the request is signed with the route's secret and the subscription's settings do not apply`,
            ]),
        ...unfiredJobNote(loaded, name, route),
      ],
    };
  }
  const { path, sub, raw, names } = await storedSubscription(loaded, name);
  // A typo of a stored name is named, rather than offered as a subscription to create.
  const meant = sub === undefined ? meantSubscription(name, names) : "";
  if (sub === undefined)
    throw new SvcError(
      "usage",
      scope === "routes and subscriptions"
        ? `the delivery was received by route "${name}", which is gone since: no route of that name in ${loaded.paths.config} and no dynamic subscription in ${path} — nothing would take the redelivery (the gateway answers 404); create the route again (svc webhook subscribe ${name}, or in config.yaml), then redeliver`
        : route !== undefined
          ? `no dynamic subscription named "${name}" in ${path}: "${name}" is a route of ${loaded.paths.config}, and svc webhook test sends only to dynamic subscriptions (svc webhook list) — send the route a request signed as its sender does (docs/webhook-auth.md), or svc webhook redeliver <delivery-id> to resend an event it received`
          : meant !== ""
            ? `no dynamic subscription named "${name}" in ${path}${meant} (see svc webhook list)`
            : `no dynamic subscription named "${name}" in ${path} — see svc webhook list (svc webhook subscribe ${name} creates one)`,
    );
  // A subscription a config.yaml route shadows is not the one answering: its own secret does not matter.
  return subscriptionTarget(
    sub,
    name,
    route === undefined
      ? [
          ...unfiredJobNote(loaded, name, sub),
          // Every delivery fails (a platform not enabled, a deliver that is no target): the 202 of an agent
          // route would read as a reply on its way. A direct delivery's 502 gets a note of its own.
          // Judged by this host's platforms only where this host serves the route (not for a worker of a
          // shared Redis, whose gateways with the adapter on have configs of their own).
          ...(sub.deliver_only || !loaded.config.platforms.webhook.enabled
            ? []
            : failingTargetNotes(loaded, name, sub).map((note) => `Note: ${note}`)),
        ]
      : [shadowNote(loaded, name, route, sub)],
    (running) => (route === undefined ? notServed(loaded, path, name, raw, running) : undefined),
  );
}

/**
 * A `cron_job` route whose job the gateway would not fire (paused, disabled, not in the route's profile's
 * store, an invalid record): its answer is still 202 accepted, so without this the test or redelivery reads
 * as a run that never comes. A store that cannot be read says nothing here (the gateway answers 503), nor one
 * read through a link to nothing (`unusableCronStore`), which the gateway answers so too.
 */
export function unfiredJobNote(
  loaded: LoadedConfig,
  name: string,
  route: Pick<Route, "cron_job" | "profile">,
  /** What is dropped: the event sent (`test`, `redeliver`), or every event of the route (`list`). */
  dropped = "the event",
): string[] {
  if (route.cron_job === undefined || unusableCronStore(loaded.paths.home, route.profile) !== undefined)
    return [];
  const jobs = cronStore(svcPaths(loaded.paths.home, route.profile).cronJobs);
  let found: ReturnType<typeof lookupJob>;
  let records: Readonly<Record<string, unknown>>;
  try {
    records = jobs.read().records;
    found = lookupJob(jobs.path, records, route.cron_job);
  } catch {
    return [];
  }
  if (found?.ok === true && found.job.state === "enabled") return [];
  const flag = profileFlag(route.profile);
  const why =
    found === undefined
      ? `which is not in ${jobs.path}${inProfile(route.profile)} (svc cron list${flag})`
      : !found.ok
        ? `which is not a valid job (${found.problems.join("; ")})`
        : `which is ${found.job.state} (svc cron resume ${jobRef(jobs.path, records, found.key, found.job.name)}${flag})`;
  return [
    `Note: ${name} fires cron job ${route.cron_job}, ${why}: the gateway answers 202 accepted and drops ${dropped} without a run`,
  ];
}

/**
 * What the config.yaml route of the subscription's name answers the test with. With multiplexing on and
 * the two bound to different profiles, the test's URL is not the route's: the answer is 404, not 401.
 */
function shadowNote(loaded: LoadedConfig, name: string, route: Route, sub: Subscription): string {
  const shadowed = `Note: ${loaded.paths.config} also defines a route "${name}", which the gateway answers with (static routes win)`;
  const elsewhere = elsewhereRoute(loaded, name, route.profile, sub.profile);
  if (elsewhere === undefined)
    return `${shadowed}: the test is signed with the subscription's secret, so it is refused with 401 unless the route has the same secret`;
  return `${shadowed}: ${elsewhere.answers}, so the test's ${elsewhere.subscriptionAt} gets 404 Unknown route`;
}
