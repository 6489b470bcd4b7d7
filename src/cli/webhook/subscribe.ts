import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { type LoadedConfig, loadConfig } from "../../config/load.js";
import { nearMiss } from "../../config/nearMiss.js";
import { DEFAULT_PROFILE, profileNameProblem } from "../../config/paths.js";
import {
  secretHeaderProblem,
  sentinelSpellingProblem,
  signingSecretProblem,
  storedSecretVariableProblem,
} from "../../config/secretWarnings.js";
import { INSECURE_NO_AUTH } from "../../config/sections/webhook.js";
import { disabledServerToolsets } from "../../config/unusedSettings.js";
import { webhookOffReason } from "../../config/webhookEnabled.js";
import { SvcError } from "../../errors.js";
import {
  actionQualifiedEventProblem,
  gitlabObjectKindProblem,
  idleKeys,
} from "../../gateway/idleRouteKeys.js";
import { toolWarnings } from "../../gateway/routeWarnings.js";
import { profilesOnDisk, unusableProfileEntry } from "../../io/profiles.js";
import {
  assertUnchanged,
  ownRecord,
  parseSubscription,
  type Subscription,
  subscriptionRoute,
} from "../../io/stores/subscriptions.js";
import { canonicalTarget } from "../../io/targets/names.js";
import { isPublicKeySecret } from "../../streams/publicKeySignature.js";
import { readSecretOption, secretFlag, theSecret } from "../secretOption.js";
import {
  elsewhereRoute,
  listeningGateway,
  portNote,
  type RunningAddress,
  routePath,
  runningAddress,
  subscriptionUrl,
  wildcardNote,
} from "./address.js";
import {
  checkCronJob,
  checkInsecure,
  checkName,
  checkNotBlank,
  checkNotOptions,
  checkOneChatId,
  checkTarget,
  logRouteHint,
} from "./checks.js";
import { adapterOffNote, cliHowToEnable } from "./config.js";
import { notServed } from "./notServed.js";
import { checkOneLineOptions } from "./oneLineOptions.js";
import { storedRecord } from "./storedRecord.js";
import type { SubscribeOptions } from "./subscribeOptions.js";
import { type CliSubscriptionStore, withSubscriptionStore } from "./subscriptionStoreFor.js";

export type { SubscribeOptions } from "./subscribeOptions.js";

/** `svc webhook subscribe <name>`: creates or updates the record, then prints its URL and secret. */
export async function subscribe(name: string, options: SubscribeOptions): Promise<void> {
  checkName(name);
  await readSecretOption(options);
  checkNotBlank(options);
  checkOneLineOptions(options);
  checkOneChatId(options);
  const loaded = loadConfig();
  checkNotOptions(name, options, loaded.paths.subscriptions);
  const running = await runningAddress(loaded);
  // Served where this command's configuration turns the adapter off: with state.backend: redis by the
  // gateways sharing that Redis (docs/durability.md); by this SVC_HOME's gateway when it runs with the
  // adapter on (started with WEBHOOK_ENABLED=true in its own environment).
  const listening = listeningGateway(running) !== undefined;
  if (!loaded.config.platforms.webhook.enabled && loaded.config.state.backend !== "redis" && !listening) {
    throw new SvcError(
      "startup_refused",
      `the webhook adapter is off (${webhookOffReason(loaded)}), so a subscription would reach nothing; nothing was written — enable it first (${cliHowToEnable(loaded)}), then run this command again`,
    );
  }
  const profileProblem =
    options.routeProfile === undefined ? undefined : profileNameProblem(options.routeProfile);
  if (profileProblem !== undefined)
    throw new SvcError("usage", `--route-profile "${options.routeProfile}": ${profileProblem}`);
  if (!loaded.config.platforms.webhook.enabled) process.stderr.write(adapterOffNote(loaded, running));
  await withSubscriptionStore(loaded, (store) => write(store, loaded, name, options, running));
}

/** Reads the record, checks the new one and writes it unless the record changed meanwhile. */
async function write(
  store: CliSubscriptionStore,
  loaded: LoadedConfig,
  name: string,
  options: SubscribeOptions,
  running: RunningAddress,
): Promise<void> {
  const snapshot = await store.read();
  const stored = storedRecord(store.path, name, ownRecord(snapshot.records, name));
  const previous = stored?.value;
  const now = new Date().toISOString();
  // An unbound route already belongs to the default profile: `--route-profile default` does not move it.
  const rebinding =
    previous !== undefined &&
    options.routeProfile !== undefined &&
    options.routeProfile !== (previous.profile ?? DEFAULT_PROFILE);
  // A hand-written record without a secret keeps using the global one until a rebinding gives it its own.
  const secret =
    options.secret ??
    (previous === undefined || rebinding ? randomBytes(32).toString("hex") : previous.secret);
  const extra: Record<string, string | number | boolean> = {
    ...(previous?.deliver_extra ?? {}),
    ...options.deliverExtra,
    ...(options.deliverChatId === undefined ? {} : { chat_id: options.deliverChatId }),
  };
  // `--deliver-extra key=` (no value) removes the key.
  for (const [key, value] of Object.entries(extra)) if (value === "") delete extra[key];
  const events = options.events === undefined ? undefined : eventList(name, options.events);
  const raw: Record<string, unknown> = {
    ...(previous ?? {}),
    ...(events === undefined ? {} : { events }),
    // An empty prompt would send the agent nothing: `--prompt ''` goes back to the payload dump.
    ...(options.prompt === undefined ? {} : { prompt: options.prompt === "" ? undefined : options.prompt }),
    ...(options.deliver === undefined ? {} : { deliver: options.deliver }),
    deliver_extra: Object.keys(extra).length === 0 ? undefined : extra,
    ...(options.deliverOnly === undefined ? {} : { deliver_only: options.deliverOnly }),
    ...(options.cronJob === undefined
      ? {}
      : { cron_job: options.cronJob === false ? undefined : options.cronJob }),
    ...(options.description === undefined
      ? {}
      : { description: options.description === "" ? undefined : options.description }),
    ...(options.routeProfile === undefined ? {} : { profile: options.routeProfile }),
    ...(options.mirrorToSession === undefined ? {} : { mirror_to_session: options.mirrorToSession }),
    ...(secret === undefined ? {} : { secret }),
    enabled: previous?.enabled ?? true,
    created_at: previous?.created_at ?? now,
    updated_at: now,
  };
  const kept = keptConflicts(name, options, previous);
  if (kept.length > 0) throw new SvcError("usage", `cannot subscribe ${name}:\n${kept.join("\n")}`);
  const parsed = parseSubscription(store.path, name, raw, "flags");
  if (!parsed.ok) throw new SvcError("usage", `cannot subscribe ${name}:\n${parsed.problems.join("\n")}`);
  checkInsecure(loaded, name, parsed.value, running, secretFlag(options));
  if (typeof options.cronJob === "string") checkCronJob(loaded, parsed.value);
  else if (options.routeProfile !== undefined) checkCronJob(loaded, parsed.value, name);
  checkTarget(loaded, name, parsed.value);
  const extraFlags = [
    ...(options.deliverChatId ? ["--deliver-chat-id"] : []),
    ...(Object.values(options.deliverExtra ?? {}).some((v) => v !== "") ? ["--deliver-extra"] : []),
    ...(options.mirrorToSession === true ? ["--mirror-to-session"] : []),
  ];
  // Flags given now on a log route are named as flags; otherwise the record's keys its other keys leave
  // without effect (a cron route delivers to its job's target; extras kept from before a --deliver log).
  if (
    parsed.value.cron_job === undefined &&
    canonicalTarget(parsed.value.deliver) === "log" &&
    extraFlags.length > 0
  )
    process.stderr.write(
      `Warning: ${name}: ${extraFlags.join(", ")} ${extraFlags.length === 1 ? "has" : "have"} no effect while the target is log (replies go to the gateway log) — add --deliver <target>, e.g. --deliver telegram\n`,
    );
  else {
    for (const problem of idleKeys(subscriptionRoute(parsed.value)))
      process.stderr.write(`Warning: ${name}: ${problem}\n`);
    process.stderr.write(logRouteHint(name, parsed.value));
  }
  // A hand-written toolsets or skills entry the record keeps, as each load of the subscriptions names it.
  for (const problem of toolWarnings(
    subscriptionRoute(parsed.value),
    Object.keys(loaded.config.mcp_servers),
    (toolsets) => disabledServerToolsets(toolsets, loaded.config),
  ))
    process.stderr.write(`Warning: ${name}: ${problem}\n`);
  for (const event of parsed.value.events ?? []) {
    if (event.includes("*"))
      process.stderr.write(
        `Warning: ${name}: --events ${JSON.stringify(event)} never matches: event types are compared exactly, with no wildcard — ${event.trim() === "*" ? "leave out --events to accept every event" : "list each event type"}\n`,
      );
    const qualified = actionQualifiedEventProblem(event) ?? gitlabObjectKindProblem(event);
    if (qualified !== undefined)
      process.stderr.write(`Warning: ${name}: --events ${JSON.stringify(event)} ${qualified}\n`);
  }
  await store.update((records) => {
    assertUnchanged(store.path, records, name, ownRecord(snapshot.records, name));
    // Fields of the record's own (written by hand or another tool) stay as they were, and so do the
    // properties this command left as they were.
    records[name] = {
      ...stored?.extra,
      ...asWritten(ownRecord(snapshot.records, name), previous, sinceChanged(previous, parsed.value)),
    };
  });
  // A static route of the same name wins while config.yaml has it: the record is written all the same (a route
  // may be moved out of config.yaml later), and the secret printed here is not the one checked until then.
  const staticRoute = Object.hasOwn(loaded.config.platforms.webhook.routes, name)
    ? loaded.config.platforms.webhook.routes[name]
    : undefined;
  const shadowed = staticRoute !== undefined;
  // Bound to another profile with multiplexing on, the route answers at its own path: the subscription's
  // answers 404 whatever the secret (the gateway serves no subscription of a static route's name).
  const elsewhere =
    staticRoute === undefined
      ? undefined
      : elsewhereRoute(loaded, name, staticRoute.profile, parsed.value.profile);
  if (elsewhere !== undefined)
    process.stderr.write(
      `Warning: config.yaml also defines a static route "${name}", which wins over this subscription while it is there: ${elsewhere.answers}, so this subscription is not served and its URL ${elsewhere.subscriptionAt} answers 404 Unknown route whatever the secret, until the route is removed from ${loaded.paths.config}\n`,
    );
  else if (shadowed)
    process.stderr.write(
      `Warning: config.yaml also defines a static route "${name}"; the static route wins over this subscription while it is there: requests to ${name} are answered by that route and checked against its secret, not this subscription's, until the route is removed from ${loaded.paths.config}\n`,
    );
  const unserved = shadowed ? undefined : notServed(loaded, store.path, name, parsed.value, running);
  if (unserved !== undefined && parsed.value.enabled)
    process.stderr.write(`Warning: the gateway does not serve ${name} (it answers 404): ${unserved}\n`);
  if (!parsed.value.enabled) {
    process.stderr.write(
      `Note: ${name} is disabled; the gateway answers 404 until svc webhook enable ${name}\n`,
    );
  }
  const boundProfile = parsed.value.profile;
  if (
    boundProfile !== undefined &&
    boundProfile !== DEFAULT_PROFILE &&
    !loaded.config.gateway.multiplex_profiles
  ) {
    process.stderr.write(
      `Note: gateway.multiplex_profiles is off ${loaded.fromFile ? `in ${loaded.paths.config}` : `(there is no ${loaded.paths.config}, and off is the default)`}, so the binding to profile ${boundProfile} is not enforced yet: the route answers at /webhooks/${name}; turn multiplexing on to serve it at /p/${boundProfile}/webhooks/${name} only\n`,
    );
  }
  // With multiplexing off the binding is not enforced yet (the note above): no path depends on the name.
  const typo =
    options.routeProfile === undefined || !loaded.config.gateway.multiplex_profiles
      ? undefined
      : profileTypo(loaded, options.routeProfile);
  if (typo !== undefined)
    process.stderr.write(
      `Warning: profile ${options.routeProfile} has no directory ${join(loaded.paths.home, "profiles", options.routeProfile as string)} — did you mean ${typo}? The route answers only at /p/${options.routeProfile}/webhooks/${name}; subscribe again with --route-profile ${typo} to fix it\n`,
    );
  // A profiles/<name> (or profiles/) that is a link to nothing or a file: the subscription's runs cannot record there.
  const unusable =
    options.routeProfile === undefined
      ? undefined
      : unusableProfileEntry(loaded.paths.home, options.routeProfile);
  if (unusable !== undefined) process.stderr.write(`Warning: ${unusable}\n`);
  const variable =
    options.secret === undefined
      ? undefined
      : (sentinelSpellingProblem(options.secret) ?? storedSecretVariableProblem(options.secret, name));
  if (variable !== undefined) process.stderr.write(`Warning: ${name}: ${theSecret(options)} ${variable}\n`);
  const signing = options.secret === undefined ? undefined : signingSecretProblem(options.secret);
  if (signing !== undefined) process.stderr.write(`Warning: ${name}: ${theSecret(options)} ${signing}\n`);
  const headerProblem = options.secret === undefined ? undefined : secretHeaderProblem(options.secret);
  if (headerProblem !== undefined)
    process.stderr.write(
      `Warning: ${name}: ${theSecret(options)} ${headerProblem}, so a sender that sends the secret itself (X-Gitlab-Token, Authorization: Bearer) is always answered 401; HMAC signatures still verify — leave ${secretFlag(options)} out for a generated one if this route takes tokens\n`,
    );
  // Adapter off with state.backend: redis, whose gateways with it on serve the record, and no gateway
  // listening here: this host has no address to give, only the path every such gateway answers at.
  const served = loaded.config.platforms.webhook.enabled || listeningGateway(running) !== undefined;
  if (served) process.stderr.write(portNote(loaded, name, running) + wildcardNote(loaded, running));
  const url = served
    ? subscriptionUrl(loaded, name, parsed.value.profile, running)
    : `${routePath(loaded, name, parsed.value.profile)} on each gateway sharing that Redis whose webhook adapter is on (this host's is off)`;
  process.stdout.write(
    `${previous === undefined ? "Subscribed" : "Updated"} ${name}\n` +
      `URL:    ${url}\n` +
      // The secret alone on its line, so a script can take the rest of the line as it is.
      `Secret: ${parsed.value.secret ?? "none of its own: the global secret (platforms.webhook.secret or WEBHOOK_SECRET)"}\n` +
      (previous !== undefined && secret !== previous.secret
        ? `The secret changed (${options.secret === undefined ? "rotated" : `set with ${secretFlag(options)}`}): the previous one no longer works — give senders this one.\n`
        : "") +
      (parsed.value.secret === INSECURE_NO_AUTH
        ? "No signature is checked (INSECURE_NO_AUTH): anyone who can reach this loopback address can post.\n"
        : parsed.value.secret !== undefined && isPublicKeySecret(parsed.value.secret)
          ? "A Standard Webhooks public key (whpk_): only requests signed with its secret key (webhook-signature v1a entries) are accepted.\n"
          : "Sign requests with X-Webhook-Signature-V2 (hex HMAC-SHA256 of <timestamp>.<body>) and X-Webhook-Timestamp, or the sender's own scheme.\n"),
  );
}

/**
 * The event types `--events` lists (its repeats joined by commas), each once. `--events ''` alone is the empty
 * list, which accepts every event; a value of only commas and spaces (an empty shell variable in a list,
 * `--events "$A,$B"`) is refused rather than taken as that.
 */
function eventList(name: string, given: readonly string[]): string[] {
  // `--events ''` alone: every event type again.
  if (given.length === 1 && given[0] === "") return [];
  const entries = given.flatMap((value) => value.split(",")).map((entry) => entry.trim());
  const events = [...new Set(entries.filter((entry) => entry !== ""))];
  const shown = given.map((value) => `--events ${JSON.stringify(value)}`).join(" ");
  if (events.length === 0)
    throw new SvcError(
      "usage",
      `cannot subscribe ${name}: ${shown} names no event type — list them (--events push,pull_request), or give --events '' alone to accept every event`,
    );
  // An empty entry beside event types (`--events "$A,$B"` with B unset, or `--events ''` beside others) is
  // no event type, and not every one either: refused rather than dropped.
  if (entries.includes(""))
    throw new SvcError(
      "usage",
      `cannot subscribe ${name}: ${shown} has an empty entry beside its event types (an unset shell variable?) — remove it, or give --events '' alone to accept every event`,
    );
  return events;
}

/**
 * A `--route-profile` with no directory that is one or two letters from a profile that has one (`wrok`
 * for `work`): a typo, as the gateway names it for static routes. A profile needs its directory only for
 * the files it holds, so any other new name is taken as it is.
 */
function profileTypo(loaded: LoadedConfig, profile: string): string | undefined {
  const profiles = profilesOnDisk(loaded.paths.home);
  return profile === DEFAULT_PROFILE || profiles.includes(profile) ? undefined : nearMiss(profile, profiles);
}

/**
 * An option that conflicts with a setting the subscription already has (from an earlier command): named
 * as such, with the `--no-...` option that lifts it, instead of as a combination of flags not given now.
 */
function keptConflicts(
  name: string,
  options: SubscribeOptions,
  previous: Subscription | undefined,
): string[] {
  if (previous === undefined) return [];
  const problems: string[] = [];
  if (options.deliverOnly === true && options.cronJob === undefined && previous.cron_job !== undefined)
    problems.push(
      `${name}: --deliver-only cannot be combined with the cron job ${previous.cron_job} the subscription fires (set earlier) — add --no-cron-job to make it a direct delivery`,
    );
  if (typeof options.cronJob === "string" && options.deliverOnly === undefined && previous.deliver_only)
    problems.push(
      `${name}: --cron-job cannot be combined with the subscription's direct delivery (--deliver-only, set earlier) — add --no-deliver-only to fire the cron job instead`,
    );
  if (options.deliver === "log" && options.deliverOnly === undefined && previous.deliver_only)
    problems.push(
      `${name}: --deliver log: the subscription delivers directly (--deliver-only, set earlier), which needs a real target — add --no-deliver-only to have an agent run and its reply logged, or name a platform`,
    );
  return problems;
}

/**
 * `value` with the record's own `updated_at` when it changes nothing else (a subscribe with no option, or
 * with the values the record has): `updated_at` is the time of its last change, as `enable` keeps it.
 */
function sinceChanged(previous: Subscription | undefined, value: Subscription): Subscription {
  if (previous === undefined) return value;
  const { updated_at: _was, ...before } = previous;
  const { updated_at: _now, ...after } = value;
  // A key the command set to undefined (no prompt, no extras) is one the record does not have.
  const defined = (record: object) => Object.entries(record).filter(([, v]) => v !== undefined);
  if (!isDeepStrictEqual(new Map(defined(before)), new Map(defined(after)))) return value;
  return previous.updated_at === undefined ? after : { ...after, updated_at: previous.updated_at };
}

/**
 * The record to write: `value`, except that a property this command did not change is written as the file
 * has it, not as read with its defaults filled in (a hand-written `coalesce: {"key": "n"}` stays that, not
 * `{"key": "n", "window_seconds": 30, "max_wait_seconds": 300}`; a single filter mapping stays a mapping).
 */
function asWritten(raw: unknown, previous: Subscription | undefined, value: Subscription): Subscription {
  if (previous === undefined || typeof raw !== "object" || raw === null) return value;
  const file = raw as Record<string, unknown>;
  const written: Record<string, unknown> = { ...value };
  for (const [key, now] of Object.entries(value)) {
    const before = previous[key as keyof Subscription];
    if (file[key] !== undefined && file[key] !== null && isDeepStrictEqual(now, before))
      written[key] = file[key];
  }
  return written as Subscription;
}
