import { statSync } from "node:fs";
import { z } from "zod";
import { describe } from "../../config/describe.js";
import { filterPathAsWritten, noteFiltersAsWritten } from "../../config/filtersWrittenAsOne.js";
import { formatJsonIssues } from "../../config/format.js";
import { knownKeysAt } from "../../config/knownKeys.js";
import { nearMiss } from "../../config/nearMiss.js";
import { profileNameProblem } from "../../config/paths.js";
import { INSECURE_NO_AUTH, type Route, routeNameProblem, routeShape } from "../../config/sections/webhook.js";
import { storedRecordSecrets } from "../../config/webhookSecrets.js";
import { describeError, SvcError } from "../../errors.js";
import { fileStamp, isRacy } from "../fileStamp.js";
import type { Logger } from "../log.js";
import { readRegularFile } from "../regularFile.js";
import { createVersionedStore, type VersionedStore } from "./versionedJson.js";

/** A record's `created_at` / `updated_at`; anything else is named as a cron job's `created_at` is. */
const timestamp = z.union([z.string(), z.number()], {
  error: (i) => `expected an ISO time as text (or a number, epoch), got ${describe(i.input)}`,
});

/** A dynamic subscription: every route property plus its own secret, a description, a switch and timestamps. */
export const subscriptionSchema = z.strictObject({
  ...routeShape,
  // A record has the capabilities of a static route, so one written by hand without a secret
  // falls back to the global secret like a static route; the CLI always writes one.
  secret: z.string().min(1).optional(),
  description: z.string().optional(),
  enabled: z.boolean().default(true),
  // Timestamps have no fixed format: ISO text (what the CLI writes) or a number (epoch) are kept as they are.
  created_at: timestamp.optional(),
  updated_at: timestamp.optional(),
});
export type Subscription = z.infer<typeof subscriptionSchema>;

const RECORD_KEYS = new Set(Object.keys(subscriptionSchema.shape));
const ROUTE_KEYS = Object.keys(routeShape);

/**
 * Spec 2.6 leaves a record's other stored fields (identifiers, timestamps) open, so a record written by
 * hand or by another tool may carry keys of its own: they are set aside (`extra`, kept when the CLI
 * rewrites the record) instead of costing the route. A key that is a near miss of a route property
 * (`colaesce`; not of the record's own fields: `createdAt` is a field of its own) is a typo, and stays in the record for the schema to refuse. A `null` value is an absent
 * one, as JSON writers emit for unset optional fields (also inside `coalesce` and `deliver_extra`).
 */
function splitRecord(raw: unknown): { record: unknown; extra: Record<string, unknown> } {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return { record: raw, extra: {} };
  const record: Record<string, unknown> = {};
  const extra: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (!RECORD_KEYS.has(key) && nearMiss(key, ROUTE_KEYS) === undefined) extra[key] = value;
    else if (value !== null) record[key] = OPTIONAL_MAPPINGS.has(key) ? withoutNulls(value) : value;
  }
  return { record, extra };
}

/**
 * Mappings of optional keys, where the same writers emit `null` for an unset one (`"window_seconds": null`,
 * `"thread_id": null`): absent, so the default applies (a cron job's `deliver_extra` reads it so too).
 */
const OPTIONAL_MAPPINGS = new Set(["coalesce", "deliver_extra"]);

function withoutNulls(value: unknown): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== null));
}

/**
 * Where a record cannot be decoded on its own (a Redis hash field that is not JSON), it stands in the
 * records as `{ [UNREADABLE_RECORD]: true }`: invalid like any broken record (skipped by the gateway,
 * listed as invalid, removable), while the other records are served. A plain object, so it survives the
 * store's structuredClone; its original text is never rewritten unless the record is removed.
 */
export const UNREADABLE_RECORD = "__svc_unreadable_record__";

export function isUnreadableRecord(raw: unknown): boolean {
  return typeof raw === "object" && raw !== null && Object.hasOwn(raw, UNREADABLE_RECORD);
}

/**
 * `records[name]` for a name the store holds, else undefined. Route names such as `constructor` or
 * `toString` are valid, and must not find Object.prototype's members in a parsed JSON object.
 */
export function ownRecord(records: Readonly<Record<string, unknown>>, name: string): unknown {
  return Object.hasOwn(records, name) ? records[name] : undefined;
}

export const STALE_SUBSCRIPTION_STORE =
  "the subscription store changed since it was read — run the command again";

/**
 * For a read-modify-write of one record: refuses (`store_conflict`) when record `name` in the freshest
 * `records` is no longer what the command read, so a stale update never brings back a removed or disabled
 * route. Changes to other records made in between are kept and do not conflict.
 */
export function assertUnchanged(
  path: string,
  records: Readonly<Record<string, unknown>>,
  name: string,
  read: unknown,
): void {
  if (JSON.stringify(ownRecord(records, name)) !== JSON.stringify(read)) {
    throw new SvcError("store_conflict", `${path}: ${STALE_SUBSCRIPTION_STORE}`);
  }
}

export function subscriptionStore(path: string): VersionedStore<unknown> {
  // Keyed by route name; a `{revision, subscriptions}` file of earlier versions is still read.
  return createVersionedStore<unknown>(path, {
    legacyField: "subscriptions",
    keyedBy: "route name",
    conflictMessage: STALE_SUBSCRIPTION_STORE,
    // An id written unquoted by hand under deliver_extra (a Discord snowflake) is kept as written, as in config.yaml.
    extraNumbersAsText: true,
  });
}

/**
 * The route-level rules as they apply to one record of `file`. `flags`: said in `svc webhook subscribe`'s
 * options (the record is being made from them); `file`: in the stored record's keys, with the file.
 */
export function subscriptionProblems(
  name: string,
  record: Route,
  file: string,
  madeFrom: "flags" | "file",
): string[] {
  const problems: string[] = [];
  const say = (key: string, flags: string, fields: string) =>
    problems.push(madeFrom === "flags" ? `${name}: ${flags}` : `${file}: ${name}.${key}: ${fields}`);
  const nameProblem = routeNameProblem(name);
  if (nameProblem !== undefined) {
    problems.push(madeFrom === "flags" ? `${name}: ${nameProblem}` : `${file}: ${name}: ${nameProblem}`);
  }
  const profileProblem = record.profile === undefined ? undefined : profileNameProblem(record.profile);
  if (profileProblem !== undefined) {
    const problem = `profile "${record.profile}": ${profileProblem}`;
    say("profile", problem, problem);
  }
  if (record.deliver_only && record.deliver === "log") {
    say(
      "deliver_only",
      "--deliver-only needs a real delivery target — add --deliver <platform> (not log)",
      `true needs a real delivery target, but deliver is log — set deliver to a platform, or remove deliver_only`,
    );
  }
  if (record.deliver_only && record.cron_job !== undefined) {
    say(
      "cron_job",
      "--deliver-only and --cron-job cannot be combined — keep one of them",
      "cannot be combined with deliver_only — remove one of them",
    );
  }
  if (record.coalesce !== undefined && (record.deliver_only || record.cron_job !== undefined)) {
    const other = record.deliver_only ? "deliver_only" : "cron_job";
    say(
      "coalesce",
      // No option sets coalesce: it was written into the record by hand.
      `the record's coalesce (written in ${file}; no option sets it) cannot be combined with --${other.replace("_", "-")} — remove coalesce from the file, or leave out --${other.replace("_", "-")}`,
      `cannot be combined with ${other} — remove one of them`,
    );
  }
  return problems;
}

/** Parses one stored record; returns the problems instead when it is invalid. */
/**
 * A record with no route property whose every key holds a mapping (`{"subscriptions": {"ci": {...}}}`, the
 * records wrapped by hand under one name, as other tools' files nest them): records, not a route to serve
 * with every default (and the global secret) while the records inside it are dropped as unknown fields.
 */
function recordsInside(
  file: string,
  name: string,
  record: unknown,
  extra: Record<string, unknown>,
): string | undefined {
  const inside = Object.entries(extra);
  const isMapping = (value: unknown) => typeof value === "object" && value !== null && !Array.isArray(value);
  if (inside.length === 0 || !inside.every(([, value]) => isMapping(value))) return undefined;
  if (!isMapping(record) || Object.keys(record as object).length > 0) return undefined;
  const names = inside.map(([key]) => JSON.stringify(key));
  return `${file}: ${name}: holds records (${names.join(", ")}), not route properties — write each of them at the top level of the file, keyed by its route name ({${names.map((key) => `${key}: {...}`).join(", ")}})`;
}

export function parseSubscription(
  file: string,
  name: string,
  raw: unknown,
  /** `flags`: the record was just made from `svc webhook subscribe`'s options; say its rules in them. */
  madeFrom: "flags" | "file" = "file",
): { ok: true; value: Subscription; extra: Record<string, unknown> } | { ok: false; problems: string[] } {
  if (isUnreadableRecord(raw))
    // The text may hold a secret: it is not quoted.
    return {
      ok: false,
      problems: [`${file}: ${name}: not valid JSON — fix it, or svc webhook remove ${name}`],
    };
  const { record, extra } = splitRecord(raw);
  const wrapped = recordsInside(file, name, record, extra);
  if (wrapped !== undefined) return { ok: false, problems: [wrapped] };
  // The input is reported so a wrong value reads "expected a string, got 5", not "missing".
  const parsed = subscriptionSchema.safeParse(record, { reportInput: true });
  if (!parsed.success) {
    // The file is keyed by route name, so the key path starts with it: `<name>.<property>`.
    const issues = parsed.error.issues.map((issue) => ({
      ...issue,
      path: [name, ...filterPathAsWritten(issue.path, record)],
    }));
    const known = (path: readonly PropertyKey[]) => knownKeysAt(subscriptionSchema, path.slice(1));
    return { ok: false, problems: formatJsonIssues(file, issues, known).split("\n") };
  }
  noteFiltersAsWritten(parsed.data, record);
  const problems = subscriptionProblems(name, parsed.data, file, madeFrom);
  return problems.length === 0 ? { ok: true, value: parsed.data, extra } : { ok: false, problems };
}

/** Where the gateway reads dynamic routes from; a static route of the same name wins (the registry merges). */
export interface SubscriptionSource {
  /** Enabled, valid subscriptions by name. */
  current(): ReadonlyMap<string, Subscription>;
  lookup(name: string): Route | undefined;
  names(): readonly string[];
  /**
   * The secrets of every record in the store, disabled and ignored ones included (storedRecordSecrets): a
   * run's output hides them all. From the last read of the store (no read of its own).
   */
  storedSecrets(): readonly string[];
  /**
   * The gateway's config was reloaded: what a record is judged by (the global secret, config.yaml's routes,
   * its MCP servers and profiles) may have changed, so the next read judges the records again, logging what
   * it finds as any load does.
   */
  reloaded(): void;
}

export interface SubscriptionSourceOptions {
  /** The bind host: INSECURE_NO_AUTH records are dropped unless it is loopback. */
  readonly loopback?: boolean;
  /**
   * Whether a global secret is set now (it may change on reload): a subscription without a secret of its
   * own is served with it, or — with none — not at all, which each load names at WARN.
   */
  readonly hasGlobalSecret?: () => boolean;
  /**
   * What a served subscription's keys leave without effect (the gateway's idle-key check, as for a
   * config.yaml route: deliver on a cron_job record; a profile binding it cannot keep), logged at WARN on
   * each load.
   */
  readonly routeWarnings?: (route: Route, name: string) => readonly string[];
  /**
   * A served subscription's script, cron job and `in_file` lists that are not there, looked for after each
   * load (`where`: the store, as the log names it) and logged at WARN, as a config.yaml route's are at start.
   */
  readonly referenceWarnings?: (route: Route, name: string, where: string) => Promise<readonly string[]>;
}

/**
 * The subscriptions a gateway serves out of stored `records` (`where` names the store in the log):
 * invalid, disabled and (off loopback) INSECURE_NO_AUTH records are dropped, each with its reason.
 */
export function activeSubscriptions(
  where: string,
  records: Readonly<Record<string, unknown>>,
  logger: Logger,
  options: SubscriptionSourceOptions = {},
): Map<string, Subscription> {
  const loaded = new Map<string, Subscription>();
  for (const [name, raw] of Object.entries(records)) {
    const parsed = parseSubscription(where, name, raw);
    if (!parsed.ok) {
      logger.error(`[webhook] dynamic subscription ${name} ignored: ${parsed.problems.join("; ")}`);
      continue;
    }
    if (!parsed.value.enabled) continue;
    if (parsed.value.secret === undefined && options.hasGlobalSecret?.() !== false) {
      logger.info(
        `[webhook] dynamic subscription ${name} has no secret of its own: the global secret applies`,
      );
    } else if (parsed.value.secret === undefined) {
      // Kept in the set: a global secret a reload brings serves it (the registry resolves it per request).
      logger.warn(
        `[webhook] dynamic subscription ${name} is enabled but not served (404): no secret of its own and no global secret (platforms.webhook.secret or WEBHOOK_SECRET) — set one with svc webhook subscribe ${name} --secret <secret>`,
      );
    }
    const extra = Object.keys(parsed.extra);
    if (extra.length > 0) {
      logger.warn(
        `[webhook] dynamic subscription ${name}: ignoring fields that are not route properties: ${extra.join(", ")}`,
      );
    }
    for (const warning of options.routeWarnings?.(subscriptionRoute(parsed.value), name) ?? [])
      logger.warn(`[webhook] dynamic subscription ${name}: ${warning}`);
    if (parsed.value.secret === INSECURE_NO_AUTH && options.loopback === false) {
      logger.error(
        `[webhook] dynamic subscription ${name} ignored: INSECURE_NO_AUTH is only allowed on a loopback bind (127.0.0.1, localhost, ::1) — give it a real secret (svc webhook subscribe ${name} --secret <secret>) or bind to 127.0.0.1`,
      );
      continue;
    }
    loaded.set(name, parsed.value);
    options.referenceWarnings?.(subscriptionRoute(parsed.value), name, where).then(
      (warnings) => {
        for (const warning of warnings) logger.warn(`[webhook] ${warning}`);
      },
      () => {},
    );
  }
  return loaded;
}

/** A subscription as a route: without its description, switch and timestamps. */
export function subscriptionRoute(found: Subscription): Route {
  const { description: _d, enabled: _e, created_at: _c, updated_at: _u, ...route } = found;
  return route;
}

/**
 * Reads `webhook_subscriptions.json` again only when its inode, size, mtime or ctime changed (one
 * `statSync` per call), or, within RACY_WINDOW_MS of its last change, when its bytes changed. A corrupt file is logged
 * and the last good set kept; invalid and disabled records are dropped.
 */
export function createSubscriptionSource(
  path: string,
  logger: Logger,
  options: SubscriptionSourceOptions = {},
): SubscriptionSource {
  const store = subscriptionStore(path);
  let stamp = "";
  let racy = false;
  let revision: string | undefined;
  let lastError: string | undefined;
  let lastBytes: Buffer | undefined;
  let active = new Map<string, Subscription>();
  let secrets: readonly string[] = [];

  function refresh(): ReadonlyMap<string, Subscription> {
    let next: string;
    let young = false;
    try {
      const st = statSync(path);
      next = fileStamp(st);
      young = isRacy(st);
    } catch {
      next = "absent";
    }
    if (next === stamp && !racy) return active;
    stamp = next;
    if (next === "absent") {
      // Served subscriptions going away is said, as each load is: else the 404s come with no log line.
      if (active.size > 0)
        logger.warn(
          `[webhook] ${path} is gone: its ${active.size} dynamic subscription(s) are no longer served (404) — restore the file or create them again with svc webhook subscribe`,
        );
      active = new Map();
      secrets = [];
      racy = false;
      revision = undefined;
      lastBytes = undefined;
      return active;
    }
    racy = young;
    // Young file (every request re-reads it): the same bytes as last time need no parse. Parsing a
    // 100-subscription file on each lookup cost ~275 µs, twice a request, for 2 s after each change.
    let bytes: Buffer | undefined;
    try {
      bytes = readRegularFile(path);
    } catch {
      bytes = undefined;
    }
    // The same corrupt bytes as last time (lastError) were reported already: no parse either.
    if (
      bytes !== undefined &&
      lastBytes !== undefined &&
      (revision !== undefined || lastError !== undefined) &&
      bytes.equals(lastBytes)
    )
      return active;
    lastBytes = bytes;
    try {
      const snapshot = store.read();
      if (snapshot.revision === revision) return active;
      revision = snapshot.revision;
      lastError = undefined;
      // Emptied while served (`jq … file > file`, which empties the file before jq reads it): said as a
      // removed file is, else the 404s come with no more than "loaded 0". A file made empty stays quiet.
      if (snapshot.empty !== undefined && active.size > 0)
        logger.warn(
          `[webhook] ${path} is empty: its ${active.size} dynamic subscription(s) are no longer served (404) — restore it from a backup or create them again with svc webhook subscribe (a command that writes to the file it reads, as jq … file > file, empties it first)`,
        );
      const loaded = activeSubscriptions(path, snapshot.records, logger, options);
      active = loaded;
      secrets = storedRecordSecrets(snapshot.records);
      logger.info(`[webhook] loaded ${loaded.size} dynamic subscription(s) from ${path}`);
    } catch (err) {
      const message = `[webhook] ${describeError(err)}; keeping the last good set of ${active.size} subscription(s)`;
      if (message !== lastError) logger.error(message);
      lastError = message;
      revision = undefined;
    }
    return active;
  }

  return {
    current: refresh,
    lookup(name) {
      const found = refresh().get(name);
      return found === undefined ? undefined : subscriptionRoute(found);
    },
    names: () => [...refresh().keys()],
    storedSecrets() {
      refresh();
      return secrets;
    },
    reloaded() {
      stamp = "";
      revision = undefined;
      lastBytes = undefined;
      lastError = undefined;
    },
  };
}
