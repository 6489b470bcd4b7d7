import { createHmac, randomBytes, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { parseDocument } from "yaml";
import { type LoadedConfig, loadConfig } from "../config/load.js";
import { DEFAULT_PROFILE, inProfile, PROFILE_NAME, svcPaths } from "../config/paths.js";
import { INSECURE_NO_AUTH, ROUTE_NAME } from "../config/sections/webhook.js";
import { LOOPBACK_HOSTS } from "../config/validate.js";
import { SvcError } from "../errors.js";
import { cronStore, findJob } from "../io/stores/cronStore.js";
import {
  assertUnchanged,
  ownRecord,
  parseSubscription,
  type Subscription,
  subscriptionStore,
} from "../io/stores/subscriptions.js";
import { targetStartupProblems } from "../io/targets/validate.js";
import { webhookKeyPath } from "../io/yamlEdit.js";
import { collectPairs, formatTable, profileFlag } from "./format.js";
import { gatewayAddress, gatewayStateFile, runningPid } from "./gatewayLifecycle.js";
import { parsePortOption } from "./options.js";

interface SubscribeOptions {
  events?: string;
  prompt?: string;
  deliver?: string;
  deliverChatId?: string;
  deliverExtra?: Record<string, string>;
  deliverOnly?: boolean;
  /** false: `--no-cron-job` (back to an agent route). */
  cronJob?: string | false;
  description?: string;
  routeProfile?: string;
  secret?: string;
  mirrorToSession?: boolean;
}

function config(): LoadedConfig {
  const loaded = loadConfig();
  if (!loaded.config.platforms.webhook.enabled) {
    // The environment wins over .env and config.yaml: `svc gateway setup --enable` cannot turn it on then.
    const how = loaded.enabledFrom.startsWith("environment variable")
      ? "set WEBHOOK_ENABLED=true in the environment (it overrides .env and config.yaml)"
      : "svc gateway setup --enable";
    process.stderr.write(
      `Note: the webhook adapter is not enabled (${loaded.enabledFrom} ${enabledIsSet(loaded) ? "is false" : "is not set, and false is its default in a config.yaml"}); ` +
        `subscriptions are stored but nothing receives them until you enable it: ${how}\n`,
    );
  }
  return loaded;
}

/** Whether config.yaml writes `enabled` at all (where it decided): "is false" would point at a missing line. */
function enabledIsSet(loaded: LoadedConfig): boolean {
  if (!loaded.fromFile || !loaded.enabledFrom.startsWith(`${loaded.paths.config}:`)) return true;
  try {
    return parseDocument(readFileSync(loaded.paths.config, "utf8")).hasIn(
      webhookKeyPath(loaded.paths.config, "enabled"),
    );
  } catch {
    return true;
  }
}

/** Where the gateway listens: the running one's address (`--host`/`--port` may differ from the config). */
interface Address {
  readonly host?: string;
  readonly port?: number;
}

/** Where a sender reaches a route: the given or configured bind, with a wildcard bind shown as loopback. */
export function subscriptionUrl(
  loaded: LoadedConfig,
  name: string,
  profile: string | undefined,
  address: Address = {},
): string {
  const webhook = loaded.config.platforms.webhook;
  const bind = address.host ?? webhook.host;
  const host = bind === "0.0.0.0" || bind === "::" ? "127.0.0.1" : bind;
  const hostPart = host.includes(":") ? `[${host}]` : host;
  const prefix =
    loaded.config.gateway.multiplex_profiles && profile !== undefined && profile !== "default"
      ? `/p/${profile}`
      : "";
  return `http://${hostPart}:${address.port ?? webhook.port}${prefix}/webhooks/${name}`;
}

/**
 * The address of the running gateway (`svc gateway start` or `run`), when there is one. One that runs MCP
 * servers only (webhook adapter off) records port 0: it has no address, `withoutListener` names its pid.
 */
function runningAddress(loaded: LoadedConfig): Address & { readonly withoutListener?: number } {
  const pid = runningPid(loaded.paths);
  if (pid === undefined) return {};
  const address = gatewayAddress(loaded.paths, pid);
  return address.port === 0 ? { withoutListener: pid } : address;
}

/** A wildcard bind is shown as 127.0.0.1, which only this machine can use: say what senders elsewhere use. */
function wildcardNote(loaded: LoadedConfig, address: Address): string {
  const bind = address.host ?? loaded.config.platforms.webhook.host;
  if (bind !== "0.0.0.0" && bind !== "::") return "";
  return `Note: the gateway listens on every interface (${bind}); the URL shows 127.0.0.1 — a sender on another machine uses this machine's address or name in its place\n`;
}

/** Port 0 in config.yaml: the gateway picks a free port when it starts, so no URL can be printed yet. */
function portNote(loaded: LoadedConfig, name: string, address: Address): string {
  if ((address.port ?? loaded.config.platforms.webhook.port) !== 0) return "";
  return `Note: platforms.webhook.port is 0 (${loaded.paths.config}): the gateway picks a free port when it starts, so the URL's port is not known yet — svc gateway status shows it, and svc webhook subscribe ${name} prints the full URL once the gateway runs\n`;
}

/** An unknown `deliver` is refused; a target whose platform is not set up yet is only a warning here. */
function checkTarget(loaded: LoadedConfig, name: string, record: Subscription): void {
  const webhook = { ...loaded.config.platforms.webhook, routes: { [name]: record } };
  const at = `${loaded.paths.config}: platforms.webhook.routes.${name}.`;
  const { unknown, notEnabled, warnings } = targetStartupProblems(
    { ...loaded.config, platforms: { ...loaded.config.platforms, webhook } },
    loaded.paths.config,
  );
  const short = (problem: string) =>
    `${name}: ${problem.startsWith(at) ? problem.slice(at.length) : problem}`;
  if (unknown.length > 0) throw new SvcError("usage", unknown.map(short).join("\n"));
  for (const problem of [...notEnabled, ...warnings]) process.stderr.write(`Warning: ${short(problem)}\n`);
  if (warnings.some((problem) => problem.includes(".deliver_extra.")))
    process.stderr.write(
      `Set deliver_extra keys with: svc webhook subscribe ${name} --deliver-extra <key>=<value>\n`,
    );
}

/** A `cron_job` must name a job of the route's own profile: that is the store the gateway fires it from. */
function checkCronJob(loaded: LoadedConfig, record: Subscription): void {
  if (record.cron_job === undefined) return;
  const jobs = cronStore(svcPaths(loaded.paths.home, record.profile).cronJobs);
  const records = jobs.read().records;
  const job = findJob(records, record.cron_job);
  // A job written by hand without a known state (or name) is never fired: refused like an unknown one.
  if (
    job !== undefined &&
    (!["enabled", "paused", "disabled"].includes(job.state) || typeof job.name !== "string")
  ) {
    const key = Object.entries(records).find(([, j]) => j === job)?.[0] ?? record.cron_job;
    throw new SvcError(
      "usage",
      `--cron-job ${record.cron_job}: ${jobs.path}: jobs.${key} is not a valid cron job (state ${JSON.stringify(job.state ?? null)}, name ${JSON.stringify(job.name ?? null)}; state must be enabled, paused or disabled) — fix it, or recreate it with svc cron create`,
    );
  }
  if (job !== undefined && job.state !== "enabled") {
    const flag = profileFlag(record.profile);
    process.stderr.write(
      `Warning: cron job ${record.cron_job} is ${job.state}: events are logged and dropped until svc cron resume ${job.name}${flag}\n`,
    );
  }
  if (job === undefined) {
    const flag = profileFlag(record.profile);
    throw new SvcError(
      "usage",
      `--cron-job ${record.cron_job}: no such cron job${inProfile(record.profile)} (${jobs.path}) — create it with svc cron create${flag}, or see svc cron list${flag}`,
    );
  }
}

/**
 * Spec 2.2 rule 5 on the record: the gateway would ignore it, so refuse it here with the reason. The
 * running gateway's bind counts too: `svc gateway start --host 0.0.0.0` overrides a loopback config.
 */
function checkInsecure(loaded: LoadedConfig, name: string, record: Subscription, running: Address): void {
  if (record.secret !== INSECURE_NO_AUTH) return;
  const host = loaded.config.platforms.webhook.host;
  const allowed = "only allowed when the gateway binds to loopback (127.0.0.1, localhost, ::1)";
  if (!LOOPBACK_HOSTS.has(host))
    throw new SvcError(
      "usage",
      `${name}: --secret INSECURE_NO_AUTH is ${allowed}, but platforms.webhook.host is ${host} (${loaded.paths.config}) — use a real secret, or bind to 127.0.0.1`,
    );
  if (running.host !== undefined && !LOOPBACK_HOSTS.has(running.host))
    throw new SvcError(
      "usage",
      `${name}: --secret INSECURE_NO_AUTH is ${allowed}, but the running gateway binds to ${running.host} (started with --host ${running.host}, ${gatewayStateFile(loaded.paths)}) — use a real secret, or restart it on loopback: svc gateway stop, then svc gateway start`,
    );
}

function checkName(name: string): void {
  if (!ROUTE_NAME.test(name)) {
    throw new SvcError(
      "usage",
      `"${name}" is not a valid route name: use letters, digits, '.', '_' and '-' (1-64, starting with a letter or digit)`,
    );
  }
}

function storedRecord(
  path: string,
  name: string,
  raw: unknown,
): { value: Subscription; extra: Record<string, unknown> } | undefined {
  if (raw === undefined) return undefined;
  const parsed = parseSubscription(path, name, raw);
  if (!parsed.ok)
    throw new SvcError(
      "store_corrupt",
      `the stored subscription is invalid — fix ${path} or remove it (svc webhook remove ${name}):\n${parsed.problems.join("\n")}`,
    );
  return parsed;
}

function existingRecord(path: string, name: string, raw: unknown): Subscription | undefined {
  return storedRecord(path, name, raw)?.value;
}

/** A blank value of these would be stored as-is (a blank secret signs nothing): refused, naming the flag. */
function checkNotBlank(options: SubscribeOptions): void {
  const values: [string, string | undefined][] = [
    ["--deliver", options.deliver],
    ["--cron-job", options.cronJob === false ? undefined : options.cronJob],
    ["--secret", options.secret],
  ];
  for (const [flag, value] of values) {
    if (value !== undefined && value.trim() === "")
      throw new SvcError(
        "usage",
        `${flag}: must not be empty — leave the option out to keep the current value`,
      );
  }
  // A token sender's header cannot carry one, and the printed Secret: line would be cut by a line break.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
  if (options.secret !== undefined && /[\x00-\x1f\x7f]/.test(options.secret))
    throw new SvcError(
      "usage",
      "--secret: must not contain a line break, tab or other control character (pasted along with it?) — give the secret alone",
    );
}

async function subscribe(name: string, options: SubscribeOptions): Promise<void> {
  checkName(name);
  checkNotBlank(options);
  const loaded = config();
  if (options.routeProfile !== undefined && !PROFILE_NAME.test(options.routeProfile)) {
    throw new SvcError(
      "usage",
      `--route-profile "${options.routeProfile}": profile names use letters, digits, "_" and "-"`,
    );
  }
  const store = subscriptionStore(loaded.paths.subscriptions);
  const snapshot = store.read();
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
  const raw: Record<string, unknown> = {
    ...(previous ?? {}),
    ...(options.events === undefined
      ? {}
      : {
          events: options.events
            .split(",")
            .map((e) => e.trim())
            .filter((e) => e !== ""),
        }),
    // An empty prompt would send the agent nothing: `--prompt ''` goes back to the payload dump (spec 2.5 rule 5).
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
  const parsed = parseSubscription(store.path, name, raw);
  if (!parsed.ok) throw new SvcError("usage", `cannot subscribe ${name}:\n${parsed.problems.join("\n")}`);
  const running = runningAddress(loaded);
  checkInsecure(loaded, name, parsed.value, running);
  if (typeof options.cronJob === "string" || options.routeProfile !== undefined)
    checkCronJob(loaded, parsed.value);
  checkTarget(loaded, name, parsed.value);
  await store.update((records) => {
    assertUnchanged(store.path, records, name, ownRecord(snapshot.records, name));
    // Fields of the record's own (written by hand or another tool) stay as they were.
    records[name] = { ...stored?.extra, ...parsed.value };
  });
  if (Object.hasOwn(loaded.config.platforms.webhook.routes, name)) {
    process.stderr.write(
      `Warning: config.yaml also defines a static route "${name}"; the static route wins over this subscription\n`,
    );
  }
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
      `Note: gateway.multiplex_profiles is off in ${loaded.paths.config}, so the binding to profile ${boundProfile} is not enforced yet: the route answers at /webhooks/${name}; turn multiplexing on to serve it at /p/${boundProfile}/webhooks/${name} only\n`,
    );
  }
  process.stderr.write(portNote(loaded, name, running) + wildcardNote(loaded, running));
  process.stdout.write(
    `${previous === undefined ? "Subscribed" : "Updated"} ${name}\n` +
      `URL:    ${subscriptionUrl(loaded, name, parsed.value.profile, running)}\n` +
      // The secret alone on its line, so a script can take the rest of the line as it is.
      `Secret: ${parsed.value.secret ?? "none of its own: the global secret (platforms.webhook.secret or WEBHOOK_SECRET)"}\n` +
      (previous !== undefined && secret !== previous.secret
        ? "The secret changed (rotated): the previous one no longer works — give senders this one.\n"
        : "") +
      (parsed.value.secret === INSECURE_NO_AUTH
        ? "No signature is checked (INSECURE_NO_AUTH): anyone who can reach this loopback address can post.\n"
        : "Sign requests with X-Webhook-Signature-V2 (hex HMAC-SHA256 of <timestamp>.<body>) and X-Webhook-Timestamp, or the sender's own scheme.\n"),
  );
}

function list(): void {
  const loaded = config();
  const store = subscriptionStore(loaded.paths.subscriptions);
  const entries = Object.entries(store.read().records);
  if (entries.length === 0) {
    process.stdout.write(
      "No dynamic subscriptions. Create one: svc webhook subscribe <name> --prompt <text>\n",
    );
    return;
  }
  const rows = entries
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, raw]) => {
      const parsed = parseSubscription(store.path, name, raw);
      if (!parsed.ok) return [name, "-", "-", "-", "invalid", parsed.problems[0] ?? ""];
      const s = parsed.value;
      const deliver =
        s.cron_job !== undefined ? `cron:${s.cron_job}` : `${s.deliver}${s.deliver_only ? " (direct)" : ""}`;
      return [
        name,
        s.events?.join(",") || "(all)",
        deliver,
        s.profile ?? "default",
        s.enabled ? "yes" : "no",
        s.description ?? "",
      ];
    });
  process.stdout.write(
    `${formatTable([["NAME", "EVENTS", "DELIVER", "PROFILE", "ENABLED", "DESCRIPTION"], ...rows])}\n`,
  );
}

async function change(name: string, action: "remove" | "enable" | "disable"): Promise<void> {
  const loaded = config();
  const store = subscriptionStore(loaded.paths.subscriptions);
  const snapshot = store.read();
  if (ownRecord(snapshot.records, name) === undefined) {
    throw new SvcError(
      "usage",
      Object.hasOwn(loaded.config.platforms.webhook.routes, name)
        ? `"${name}" is a static route of config.yaml (platforms.webhook.routes.${name}) — edit that file to change it (${loaded.paths.config}); svc webhook ${action} works on dynamic subscriptions only`
        : `no dynamic subscription named "${name}" in ${store.path} — see svc webhook list`,
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
    else if (typeof current !== "object" || current === null || Array.isArray(current))
      // Spreading a number or a list would replace it with a half record: the file needs a human.
      throw new SvcError(
        "store_corrupt",
        `${store.path}: ${name} is not a subscription record (${JSON.stringify(current)}) — fix it in the file, or svc webhook remove ${name}`,
      );
    else records[name] = { ...current, enabled: action === "enable", updated_at: new Date().toISOString() };
    return records[name];
  });
  process.stdout.write(
    `${action === "remove" ? "Removed" : action === "enable" ? "Enabled" : "Disabled"} ${name}\n`,
  );
  const unserved = action === "enable" ? notServed(loaded, store.path, name, changed) : undefined;
  if (unserved !== undefined)
    process.stderr.write(
      `Warning: ${name} is enabled, but the gateway does not serve it (it answers 404): ${unserved}\n`,
    );
}

/** Why the gateway would skip this record (invalid, no secret at all, INSECURE_NO_AUTH off loopback). */
function notServed(loaded: LoadedConfig, path: string, name: string, raw: unknown): string | undefined {
  const parsed = parseSubscription(path, name, raw);
  if (!parsed.ok) return `the record is invalid — fix it in ${path}:\n${parsed.problems.join("\n")}`;
  const webhook = loaded.config.platforms.webhook;
  const setSecret = `set one with svc webhook subscribe ${name} --secret <secret>`;
  if (parsed.value.secret === undefined && webhook.secret === undefined)
    return `it has no secret of its own and there is no global secret (platforms.webhook.secret or WEBHOOK_SECRET) — ${setSecret}`;
  if (parsed.value.secret === INSECURE_NO_AUTH && !LOOPBACK_HOSTS.has(webhook.host))
    return `its secret is INSECURE_NO_AUTH, which is served only on a loopback bind, but platforms.webhook.host is ${webhook.host} — ${setSecret}`;
  return undefined;
}

/** An event type sent as a header: printable ASCII (fetch refuses control characters and non-Latin-1). */
const HEADER_EVENT = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/** Headers of the generic V2 scheme: hex HMAC-SHA256 of `<timestamp>.<body>`. */
export function signGenericV2(secret: string, body: string, nowSeconds: number): Record<string, string> {
  const timestamp = String(nowSeconds);
  const signature = createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex");
  return { "x-webhook-timestamp": timestamp, "x-webhook-signature-v2": signature };
}

async function test(
  name: string,
  options: { payload?: string; event?: string; port?: string },
): Promise<void> {
  const loaded = config();
  const store = subscriptionStore(loaded.paths.subscriptions);
  const sub = existingRecord(store.path, name, ownRecord(store.read().records, name));
  if (sub === undefined)
    throw new SvcError(
      "usage",
      `no dynamic subscription named "${name}" in ${store.path} — svc webhook test only sends to subscriptions (see svc webhook list)`,
    );
  if (!sub.enabled)
    process.stderr.write(
      `Note: ${name} is disabled; the gateway will answer 404 until svc webhook enable ${name}\n`,
    );
  if (Object.hasOwn(loaded.config.platforms.webhook.routes, name))
    process.stderr.write(
      `Note: config.yaml defines a static route "${name}" too; the gateway answers with it (static routes win), so this subscription's secret and settings do not apply\n`,
    );
  let body =
    options.payload ??
    JSON.stringify({
      event_type: "test",
      message: `Test event from svc webhook test ${name}`,
      sent_at: new Date().toISOString(),
    });
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new SvcError("usage", "--payload: not valid JSON");
  }
  body = body.trim();
  // The header wins over the payload's own event_type at the gateway, so it must not contradict --payload.
  const payloadEvent =
    options.payload !== undefined && typeof (parsed as { event_type?: unknown })?.event_type === "string"
      ? (parsed as { event_type: string }).event_type
      : undefined;
  const secret = sub.secret ?? loaded.config.platforms.webhook.secret;
  if (secret === undefined)
    throw new SvcError(
      "usage",
      `${name} has no secret of its own and there is no global secret (platforms.webhook.secret in ${loaded.paths.config}, or WEBHOOK_SECRET) — the gateway does not serve it; set one with svc webhook subscribe ${name} --secret <secret>`,
    );
  if (options.event !== undefined && !HEADER_EVENT.test(options.event))
    throw new SvcError(
      "usage",
      `--event ${JSON.stringify(options.event)}: cannot be sent as the X-Forge-Event header (it must be non-empty printable ASCII) — leave --event out and put the type in the payload's event_type (--payload '{"event_type": ...}')`,
    );
  const event = options.event ?? payloadEvent ?? sub.events?.[0] ?? "test";
  const running = runningAddress(loaded);
  const port = options.port !== undefined ? parsePortOption(options.port) : running.port;
  if (port === undefined && running.withoutListener !== undefined)
    throw new SvcError(
      "delivery_failed",
      `the running gateway (pid ${running.withoutListener}) has no webhook listener: the webhook adapter is off (${loaded.enabledFrom} is false) — enable it with svc gateway setup --enable, then restart the gateway: svc gateway stop, then svc gateway start`,
    );
  if ((port ?? loaded.config.platforms.webhook.port) === 0)
    throw new SvcError(
      "usage",
      options.port !== undefined
        ? "--port 0: give the port the gateway listens on (svc gateway status shows it)"
        : `platforms.webhook.port is 0 in ${loaded.paths.config} and no gateway is running, so there is no port to send to — start it with svc gateway start, or give --port <port>`,
    );
  const url = subscriptionUrl(loaded, name, sub.profile, {
    ...running,
    ...(port === undefined ? {} : { port }),
  });
  const headers = {
    "content-type": "application/json",
    // An event type a header cannot carry (non-ASCII, a newline) is left to the payload's event_type.
    ...(HEADER_EVENT.test(event) ? { "x-forge-event": event } : {}),
    "x-request-id": `svc-test-${randomUUID()}`,
    ...signGenericV2(secret, body, Math.floor(Date.now() / 1000)),
  };
  let response: Response;
  try {
    response = await fetch(url, { method: "POST", headers, body, signal: AbortSignal.timeout(10_000) });
  } catch (err) {
    throw new SvcError(
      "delivery_failed",
      `cannot reach the gateway at ${url} (${(err as Error & { cause?: Error }).cause?.message ?? (err as Error).message}) — start it with svc gateway start (or svc gateway run)`,
    );
  }
  process.stdout.write(`POST ${url}\n${response.status} ${response.statusText}\n${await response.text()}\n`);
  if (response.status >= 400) process.exitCode = 1;
}

/** `svc webhook ...` (spec 4.3): dynamic subscriptions in $SVC_HOME/webhook_subscriptions.json. */
export function registerWebhookCommands(program: Command): void {
  const webhook = program.command("webhook").description("dynamic webhook subscriptions");
  webhook
    .command("subscribe <name>")
    // The short names other agent gateways' `webhook` commands accept.
    .alias("add")
    .description("create or update a subscription; prints its URL and secret")
    .option(
      "--events <list>",
      "comma-separated event types, or the option repeated (default: all)",
      // Repeated `--events a --events b` adds up instead of keeping only the last one.
      (value: string, previous?: string) => (previous === undefined ? value : `${previous},${value}`),
    )
    .option("--prompt <template>", "prompt template with {dot.path} fields")
    .option("--deliver <target>", "delivery target (default log)")
    .option("--deliver-chat-id <id>", "deliver_extra.chat_id for chat targets")
    .option(
      "--deliver-extra <key=value>",
      "deliver_extra key, e.g. repo=owner/name, pr_number={number} (repeatable; key= removes it)",
      collectPairs,
    )
    .option("--deliver-only", "no agent: the rendered prompt is the message")
    .option("--no-deliver-only", "an agent run again (after --deliver-only)")
    .option("--cron-job <id-or-name>", "fire this cron job on each event")
    .option("--no-cron-job", "stop firing the cron job: an agent run again")
    .option("--description <text>", "what this subscription is for")
    .option("--route-profile <profile>", "profile that runs the route (rebinding rotates the secret)")
    .option("--secret <secret>", "use this secret instead of a generated one")
    .option("--mirror-to-session", "write chat deliveries into the chat's session")
    .option("--no-mirror-to-session", "stop mirroring")
    .action(subscribe);
  webhook.command("list").alias("ls").description("list subscriptions (no secrets)").action(list);
  webhook
    .command("remove <name>")
    .alias("rm")
    .description("remove a subscription")
    .action((name: string) => change(name, "remove"));
  webhook
    .command("enable <name>")
    .description("enable a subscription")
    .action((name: string) => change(name, "enable"));
  webhook
    .command("disable <name>")
    .description("disable a subscription (the gateway answers 404)")
    .action((name: string) => change(name, "disable"));
  webhook
    .command("test <name>")
    .description("send a signed test event to a subscription on the running gateway")
    .option("--payload <json>", "request body (default: a small test event)")
    .option(
      "--event <type>",
      "event type header (default: the payload's event_type, else the first of the subscription's events, else test)",
    )
    .option("--port <port>", "gateway port (default: the running gateway's, else platforms.webhook.port)")
    .action(test);
}
