import type { LoadedConfig } from "../../config/load.js";
import { routeKey } from "../../config/sections/webhook.js";
import { SvcError } from "../../errors.js";
import { isUnreadableRecord, ownRecord } from "../../io/stores/subscriptions.js";
import { runningAddress } from "./address.js";
import { configWithEnabledNote } from "./config.js";
import { meantSubscription } from "./meantSubscription.js";
import { notServed } from "./notServed.js";
import { type CliSubscriptionStore, withSubscriptionStore } from "./subscriptionStoreFor.js";
import { unfiredJobNote } from "./testTarget.js";

/** `svc webhook remove|enable|disable <name>` on a dynamic subscription. */
export async function change(name: string, action: "remove" | "enable" | "disable"): Promise<void> {
  const loaded = await configWithEnabledNote();
  await withSubscriptionStore(loaded, (store) => apply(store, loaded, name, action));
}

async function apply(
  store: CliSubscriptionStore,
  loaded: LoadedConfig,
  name: string,
  action: "remove" | "enable" | "disable",
): Promise<void> {
  const snapshot = await store.read();
  if (ownRecord(snapshot.records, name) === undefined) {
    const meant = meantSubscription(name, Object.keys(snapshot.records));
    throw new SvcError(
      "usage",
      Object.hasOwn(loaded.config.platforms.webhook.routes, name)
        ? `"${name}" is a static route of config.yaml (${routeKey(name, loaded.config.platforms.webhook.routes[name] as object)}) — edit that file to change it (${loaded.paths.config}); svc webhook ${action} works on dynamic subscriptions only`
        : `no dynamic subscription named "${name}" in ${store.path}${meant === "" ? " — see svc webhook list" : `${meant} (see svc webhook list)`}`,
    );
  }
  // Applied to the record as it is under the lock: removing or switching a route can never bring back
  // anything stale, so a concurrent change of the record does not refuse it (only one that removed it).
  const { result: changed } = await store.update((records) => {
    const current = ownRecord(records, name) as Record<string, unknown> | undefined;
    if (current === undefined) {
      throw new SvcError(
        "store_conflict",
        `${store.path}: ${name} was removed meanwhile — see svc webhook list`,
      );
    }
    if (action === "remove") delete records[name];
    else if (
      typeof current !== "object" ||
      current === null ||
      Array.isArray(current) ||
      isUnreadableRecord(current)
    )
      // Spreading a number or a list would replace it with a half record: the file needs a human.
      throw new SvcError(
        "store_corrupt",
        isUnreadableRecord(current)
          ? `${store.path}: ${name} is not valid JSON — fix it, or svc webhook remove ${name}`
          : `${store.path}: ${name} is not a subscription record (${JSON.stringify(current)}) — fix it in the file, or svc webhook remove ${name}`,
      );
    else if ((current.enabled ?? true) !== (action === "enable"))
      records[name] = { ...current, enabled: action === "enable", updated_at: new Date().toISOString() };
    return records[name];
  });
  // The same line when it was already so (scripts read it), but the record, updated_at included, is left as it was.
  process.stdout.write(
    `${action === "remove" ? "Removed" : action === "enable" ? "Enabled" : "Disabled"} ${name}\n`,
  );
  const shadowed = Object.hasOwn(loaded.config.platforms.webhook.routes, name);
  if (action === "enable" && shadowed)
    process.stderr.write(
      `Warning: ${loaded.paths.config} also defines a static route "${name}"; the static route wins, so the gateway answers with it, not with this subscription\n`,
    );
  // The route keeps answering (static routes win): "Disabled" or "Removed" alone would read as a 404 now.
  if (action !== "enable" && shadowed)
    process.stderr.write(
      `Note: ${loaded.paths.config} defines a static route "${name}", which the gateway still answers with (static routes win): requests to ${name} are not refused; remove the route there to stop them\n`,
    );
  const unserved =
    action === "enable" && !shadowed
      ? notServed(loaded, store.path, name, changed, await runningAddress(loaded))
      : undefined;
  if (unserved !== undefined)
    process.stderr.write(
      `Warning: ${name} is enabled, but the gateway does not serve it (it answers 404): ${unserved}\n`,
    );
  // Served, but firing a cron job the gateway would not fire (paused, disabled, gone, invalid): said as list says it.
  else if (
    action === "enable" &&
    !shadowed &&
    loaded.config.platforms.webhook.enabled &&
    typeof changed === "object" &&
    changed !== null
  ) {
    const { cron_job: job, profile } = changed as { cron_job?: unknown; profile?: unknown };
    if (typeof job === "string")
      for (const note of unfiredJobNote(
        loaded,
        name,
        { cron_job: job, ...(typeof profile === "string" ? { profile } : {}) },
        "its events",
      ))
        process.stderr.write(`${note}\n`);
  }
}
