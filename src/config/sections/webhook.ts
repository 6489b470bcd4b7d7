import { z } from "zod";
import { RAW_KEY_PATH, unpairedBrace, unresolvableKeyPath } from "../../streams/coalesceKey.js";
import { describe, quotingIssue } from "../describe.js";
import { keepGiven } from "../givenValues.js";
import { bindHost } from "../host.js";
import { unreadPlaceholderProblem, unsetVariablesIn } from "../interpolate.js";
import { nameCharNote, PROFILE_NAME_RULE, profileNameProblem } from "../paths.js";
import { timerSeconds } from "../timerSeconds.js";
import { filterSchema } from "./filters.js";

export const ROUTE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** One character a route name may hold. */
export const ROUTE_NAME_CHAR = /[A-Za-z0-9._-]/;
/** What `ROUTE_NAME` allows, in words (a name such as `-x` uses only allowed characters but starts wrong). */
export const ROUTE_NAME_RULE =
  "route names use letters, digits, '.', '_' and '-' (1-64, starting with a letter or digit)";
export const INSECURE_NO_AUTH = "INSECURE_NO_AUTH";

/** The most ingress threads (`platforms.webhook.workers`). */
export const MAX_WORKERS = 64;

/**
 * The largest `max_body_bytes`: 256 MiB, past which a body could not be used. V8 makes no string of more
 * than ~512 MiB, so a body near that could never be parsed as JSON (a body's text and its parse are held
 * together), and uWS closes a connection that declares a Content-Length of 1 000 000 000 or more without
 * an answer. It stays far above the largest payload a sender documents (GitHub caps its webhook payloads
 * at 25 MB); the bound on bodies received at once (64 of them: BUFFERED_BODIES in io/http/core.ts) is the
 * user's to keep small.
 */
export const MAX_BODY_BYTES_LIMIT = 256 * 1024 * 1024;

/** Why `name` cannot be a route name (its length named when that is what is wrong), or undefined. */
export function routeNameProblem(name: string): string | undefined {
  if (ROUTE_NAME.test(name)) return undefined;
  if (name.length > 64 && ROUTE_NAME.test(name.slice(0, 64)))
    return `${name.length} characters long — a route name has at most 64: shorten it`;
  // `routes: {${ROUTE}: ...}`: config.yaml replaces a ${VAR} in values, never in a key.
  if (name.includes("${"))
    return `${ROUTE_NAME_RULE}; a \${VAR} is replaced in values only, never in a name: write the route's name itself`;
  return `${ROUTE_NAME_RULE}${nameCharNote(name, ROUTE_NAME_CHAR)}`;
}

/** A route name as a record key of config.yaml or the subscription store. */
const routeName = z.string().superRefine((name, ctx) => {
  const problem = routeNameProblem(name);
  if (problem !== undefined) ctx.addIssue({ code: "custom", message: problem });
});

export const coalesceSchema = z.strictObject({
  // A blank key (spaces only) names no payload field: it would never resolve, so every event would be
  // dispatched at once without a word, as if the route did not coalesce.
  key: z
    .string()
    .refine(
      (key) => key.trim() !== "",
      "empty — it names no field, so every event would run at once: set it to the payload path that names the entity (pull_request.number) or a {template}",
    )
    // So does a path with an empty segment, or an empty placeholder: `a..b`, `{ }`, `{repo.}`.
    .superRefine((key, ctx) => {
      if (key.trim() === "") return;
      const brace = unpairedBrace(key);
      if (brace !== undefined) {
        ctx.addIssue({
          code: "custom",
          message:
            brace === "{"
              ? `a "{" without its closing "}": the key is read as constant text, so every event of the route would share one group — close the placeholder, e.g. {pull_request.number}`
              : `a "}" without its opening "{": no payload has a field of that name, so the key never resolves and every event would run at once — write a dotted path such as pull_request.number, or a placeholder such as {pull_request.number}`,
        });
        return;
      }
      const path = unresolvableKeyPath(key);
      if (path === RAW_KEY_PATH)
        ctx.addIssue({
          code: "custom",
          message: `{__raw__} is the whole payload in a prompt, not a field a key can group by: the key never resolves and every event would run at once — write the field that the events of one group share, such as pull_request.number`,
        });
      else if (path !== undefined)
        ctx.addIssue(
          quotingIssue(
            key,
            (quoted, given) =>
              `${path === "" ? "an empty placeholder" : given ? `a placeholder of ${quoted}` : describe(path)} names no payload field, so the key never resolves and every event would run at once — write a dotted path such as pull_request.number, or a template such as {repository.full_name}#{pull_request.number}`,
          ),
        );
    }),
  window_seconds: z.number().nonnegative().default(30),
  max_wait_seconds: z.number().nonnegative().default(300),
});

const extraValue = z.union([z.string(), z.number(), z.boolean()], {
  error: "expected text (a {template}), a number or true/false",
});

/**
 * A webhook secret: an empty one is refused (too short), and so is one of spaces only, which anyone can
 * sign with (a `WEBHOOK_SECRET=" "` or `secret: "  "` left as a placeholder).
 */
const webhookSecret = z
  .string()
  .min(1)
  .refine((secret) => secret === "" || secret.trim() !== "", {
    message:
      "is blank (spaces only): anyone could sign with it — write a real secret (svc gateway setup --generate-secret makes one), or leave the key out",
  });

/**
 * A name that must not be empty, nor spaces only: a blank `script` or `cron_job` names nothing, and its
 * warning ("script:    — not found") would show nothing either.
 */
function nonBlank(fix: string) {
  return z
    .string()
    .min(1)
    .refine((text) => text === "" || text.trim() !== "", { message: `is blank (spaces only) — ${fix}` });
}

/** Properties shared by static routes and dynamic subscriptions. */
export const routeShape = {
  events: z.array(z.string()).optional(),
  secret: webhookSecret.optional(),
  // The profile's directory is <home>/profiles/<name>: a name that cannot be one would fail every run.
  profile: z
    .string()
    // Empty (`profile: ${P}` with `P=`): refused as any empty text is, naming the variable, not a name's rules.
    .min(1)
    .superRefine((name, ctx) => {
      if (name === "") return;
      const problem = profileNameProblem(name);
      if (problem === undefined) return;
      // `profile: ${PROFILE}` that nothing sets (config.yaml only: a store's record is not interpolated).
      const unset = unsetVariablesIn(name)[0];
      // One a `${VAR}` gave is named as the file writes it, and no name is made of it.
      const issue = quotingIssue(name, (quoted, given) =>
        given ? `${quoted} is no profile name: ${PROFILE_NAME_RULE}` : problem,
      );
      ctx.addIssue(
        unset === undefined
          ? issue
          : { ...issue, params: { ...issue.params, unsetVariable: unset, unlessJson: true } },
      );
    })
    .optional(),
  prompt: z.string().optional(),
  // One filter written as a mapping instead of a one-entry list is taken as that list.
  filters: z
    .preprocess(
      (raw) => (typeof raw === "object" && raw !== null && !Array.isArray(raw) ? [raw] : raw),
      z.array(filterSchema),
    )
    .optional(),
  script: nonBlank(
    "write the script's file name in the profile's scripts/ directory, or leave the key out",
  ).optional(),
  skills: z.array(z.string()).optional(),
  toolsets: z.array(z.string()).optional(),
  deliver: z.string().min(1).default("log"),
  deliver_extra: z.record(z.string(), extraValue).optional(),
  deliver_only: z.boolean().default(false),
  cron_job: nonBlank("write the cron job's id or name (svc cron list), or leave the key out").optional(),
  coalesce: coalesceSchema.optional(),
  mirror_to_session: z.boolean().default(false),
};

export const routeSchema = z.strictObject(routeShape);
export type Route = z.infer<typeof routeSchema>;

const BLANK_HOST =
  "is blank (spaces only) — write an address to listen on, such as 127.0.0.1, or 0.0.0.0 for every interface, or leave the key out";

const adapterShape = {
  enabled: z.boolean().default(false),
  host: z
    .string()
    .min(1)
    .transform((text, ctx) => {
      // `host: ${BIND_HOST}` with nothing setting it: its text would reach listen() as a host name.
      const unset = unsetVariablesIn(text)[0];
      const unread = unset === undefined ? unreadPlaceholderProblem(text) : undefined;
      if (unset !== undefined || unread !== undefined) {
        ctx.addIssue({
          code: "custom",
          message: unread ?? `\${${unset}} is not set`,
          input: text,
          ...(unset === undefined ? {} : { params: { unsetVariable: unset } }),
        });
        return z.NEVER;
      }
      // Spaces only: listen() would read what is left, "", as every interface, which no one meant.
      if (text.trim() === "") {
        ctx.addIssue({ code: "custom", message: BLANK_HOST, input: text });
        return z.NEVER;
      }
      const bind = bindHost(text);
      if ("host" in bind) return bind.host;
      ctx.addIssue({ code: "custom", message: bind.problem, input: text, params: { quoting: bind.quoting } });
      return z.NEVER;
    })
    .default("0.0.0.0"),
  port: z.number().int().min(0).max(65535).default(8644),
  secret: webhookSecret.optional(),
  rate_limit: z.number().int().positive().default(30),
  max_body_bytes: z.number().int().positive().max(MAX_BODY_BYTES_LIMIT).default(1_048_576),
  script_timeout_seconds: timerSeconds(30),
  /** `uws` (default) or `node`: node:http also answers HTTP/1.0 clients, e.g. nginx's default upstream. */
  http_server: z.enum(["uws", "node"]).default("uws"),
  /**
   * Ingress threads for uWS (docs/operations.md): 0 (default) serves HTTP on the main thread; N runs the
   * sockets and HTTP parsing on N threads sharing the port, the pipeline staying on the main thread.
   */
  workers: z.number().int().min(0).max(MAX_WORKERS).default(0),
  /** One INFO line per request (route, status, delivery ID, latency): docs/operations.md. */
  access_log: z.boolean().default(false),
  /** Recent deliveries (and their payloads) for `svc webhook deliveries|redeliver`: docs/operations.md. */
  delivery_history: z.boolean().default(true),
  /** `GET /metrics` on the webhook port; unset: served only on a loopback bind (docs/operations.md). */
  metrics: z.boolean().optional(),
  routes: z.record(routeName, routeSchema).default({}),
};

/** The settings of `platforms.webhook` (besides `extra`). */
export const WEBHOOK_SETTINGS: readonly string[] = Object.keys(adapterShape);

/** `platforms.webhook`: keys may sit directly or under `extra`; the `extra` value wins. */
export const webhookSchema = z.preprocess(
  (raw, ctx) => {
    if (raw === null || raw === undefined) return {};
    if (typeof raw !== "object" || Array.isArray(raw)) return raw;
    const { extra, ...direct } = raw as Record<string, unknown>;
    if (extra === undefined || extra === null) return direct;
    // Not a mapping: kept so the schema says `extra: expected a mapping`.
    if (typeof extra !== "object" || Array.isArray(extra)) return { ...direct, extra };
    // `extra` itself goes on to the transform, which notes where its keys were written.
    const merged: Record<string, unknown> = { ...direct, ...(extra as Record<string, unknown>), extra };
    // `extra` is read one level deep; the keys of an `extra` inside it would be dropped without a word.
    // (Reported at platforms.webhook.extra.extra: a key written under extra is pointed back there.)
    if (Object.hasOwn(extra, "extra"))
      ctx.addIssue({
        code: "custom",
        path: ["extra"],
        message: "extra inside extra is not read — move its keys up into platforms.webhook.extra",
        input: (extra as Record<string, unknown>).extra,
      });
    // Routes merge by name (the one under extra wins): a route added directly beside an extra.routes
    // written for another gateway is served, not silently dropped.
    const routes = [direct.routes, (extra as Record<string, unknown>).routes];
    if (routes.every((r) => typeof r === "object" && r !== null && !Array.isArray(r)))
      merged.routes = { ...(routes[0] as object), ...(routes[1] as object) };
    return merged;
  },
  z
    .strictObject({ ...adapterShape, extra: z.record(z.string(), z.unknown()).optional() })
    .transform(({ extra, ...settings }) => noteWrittenUnderExtra(settings, extra)),
);
export type WebhookSettings = z.infer<typeof webhookSchema>;

/**
 * The key path of a setting as written, for messages: a route written under `platforms.webhook.extra.routes`
 * (the `extra` value wins over a direct one of the same name) or a key under `extra` is named there.
 * Kept as a non-enumerable symbol on the parsed objects, so it never shows in their keys or equality.
 */
const WRITTEN_AT = Symbol("written at");
const EXTRA_KEYS = Symbol("keys written under extra");

/** `platforms.webhook.<key>`, or `platforms.webhook.extra.<key>` when the key was written there. */
export function settingKey(webhook: object, key: string): string {
  const underExtra = (webhook as { [EXTRA_KEYS]?: ReadonlySet<string> })[EXTRA_KEYS]?.has(key) === true;
  return `platforms.webhook.${underExtra ? "extra." : ""}${key}`;
}
type Noted = { [WRITTEN_AT]?: string };

function noteWrittenUnderExtra<T extends { routes: Record<string, Route> }>(
  settings: T,
  extra: Record<string, unknown> | undefined,
): T {
  if (extra === undefined) return settings;
  Object.defineProperty(settings, EXTRA_KEYS, { value: new Set(Object.keys(extra)), enumerable: false });
  const note = (target: object, at: string) =>
    Object.defineProperty(target, WRITTEN_AT, { value: at, enumerable: false });
  const underExtra = extra.routes;
  if (typeof underExtra === "object" && underExtra !== null) {
    for (const name of Object.keys(underExtra)) {
      const route = settings.routes[name];
      if (route !== undefined) note(route, `platforms.webhook.extra.routes.${name}`);
    }
  }
  if (Object.hasOwn(extra, "secret")) note(settings, "platforms.webhook.extra");
  return settings;
}

const SHADOWED = Symbol("routes written under routes and extra.routes");

/**
 * Notes the route names written both under `platforms.webhook.routes` and `platforms.webhook.extra.routes`
 * (the one under `extra` is served, the other dropped), for the warning that says so.
 */
export function noteShadowedRoutes(webhook: object, names: readonly string[]): void {
  if (names.length > 0) Object.defineProperty(webhook, SHADOWED, { value: names, enumerable: false });
}

/** The route names noted by noteShadowedRoutes. */
export function shadowedRoutes(webhook: object): readonly string[] {
  return (webhook as { [SHADOWED]?: readonly string[] })[SHADOWED] ?? [];
}

const SHADOWED_SETTINGS = Symbol("settings written directly and under extra");

/**
 * Notes the settings (`port`, `rate_limit`, ...) written both directly under `platforms.webhook` and under its
 * `extra` (the `extra` value is used, the other dropped), for the warning that says so.
 */
export function noteShadowedSettings(webhook: object, keys: readonly string[]): void {
  if (keys.length > 0) Object.defineProperty(webhook, SHADOWED_SETTINGS, { value: keys, enumerable: false });
}

/** The setting names noted by noteShadowedSettings. */
export function shadowedSettings(webhook: object): readonly string[] {
  return (webhook as { [SHADOWED_SETTINGS]?: readonly string[] })[SHADOWED_SETTINGS] ?? [];
}

/** `platforms.webhook.routes.<name>`, or `platforms.webhook.extra.routes.<name>` for a route written there. */
export function routeKey(name: string, route: object): string {
  return (route as Noted)[WRITTEN_AT] ?? `platforms.webhook.routes.${name}`;
}

/** `platforms.webhook.secret`, or `platforms.webhook.extra.secret` when the global secret was written there. */
export function globalSecretKey(webhook: object): string {
  return `${(webhook as Noted)[WRITTEN_AT] ?? "platforms.webhook"}.secret`;
}

const SECRET_AS_WRITTEN = Symbol("global secret taken as written");

/**
 * Notes that the global secret is WEBHOOK_SECRET as `.env` takes it as written ('single quotes'): a `${NAME}`
 * in it is part of the secret, not a variable nothing set.
 */
export function noteSecretAsWritten(webhook: object): void {
  Object.defineProperty(webhook, SECRET_AS_WRITTEN, { value: true, enumerable: false });
}

/** Whether noteSecretAsWritten noted the global secret. */
export function secretAsWritten(webhook: object): boolean {
  return (webhook as { [SECRET_AS_WRITTEN]?: boolean })[SECRET_AS_WRITTEN] === true;
}

const SECRET_CHECKED = Symbol("the secret as checked for ${NAME} left unset");

/**
 * Notes the text a secret (a route's, or the global one) is checked in for a `${NAME}` nothing set: the
 * secret rendered with each `.env` value taken as written ('single quotes') stood in by text without `${`,
 * since a value substituted into config.yaml is not rendered again: a `${NAME}` it holds is text of the secret.
 */
export function noteSecretChecked(target: object, text: string): void {
  Object.defineProperty(target, SECRET_CHECKED, { value: text, enumerable: false });
}

/** What noteSecretChecked noted for `target`, else its secret. */
export function checkedSecret(target: { secret?: string | undefined }): string | undefined {
  return (target as { [SECRET_CHECKED]?: string })[SECRET_CHECKED] ?? target.secret;
}

const SECRET_FROM = Symbol("the variable that gave the global secret");

/**
 * Notes that WEBHOOK_SECRET gave the global secret, `from` naming where (`environment variable WEBHOOK_SECRET`,
 * `<SVC_HOME>/.env: WEBHOOK_SECRET`), for a problem with its value to be named there, not at a key of the file.
 */
export function noteSecretFrom(webhook: object, from: string): void {
  Object.defineProperty(webhook, SECRET_FROM, { value: from, enumerable: false });
}

/** Where noteSecretFrom noted the global secret came from. */
export function secretFrom(webhook: object): string | undefined {
  return (webhook as { [SECRET_FROM]?: string })[SECRET_FROM];
}

const SECRET_WRITING = Symbol("how a secret is written, for the $NAME check");

/**
 * Whether a secret (a route's, or the global one) is written as a shell's `$NAME`, judged on the text that
 * wrote it, never on a value a variable gave: config.yaml's own text, or that of the variable that wrote the
 * secret as the environment or `.env` wrote it, `from` naming it (as noteSecretFrom notes it): WEBHOOK_SECRET
 * for a global secret it gave, or NAME when config.yaml's text is a whole `${NAME}` (`substituted`).
 * Holds no text of the secret.
 */
export interface SecretWriting {
  readonly bareVariable: boolean;
  readonly from?: string | undefined;
  /** The variable whose value config.yaml's whole `${NAME}` substituted (`from` names where it is set). */
  readonly substituted?: string | undefined;
}

/** Notes how a secret is written (see SecretWriting) on the route or `platforms.webhook` that holds it. */
export function noteSecretWriting(target: object, writing: SecretWriting): void {
  Object.defineProperty(target, SECRET_WRITING, { value: writing, enumerable: false });
}

/** What noteSecretWriting noted, or undefined (then the secret's value is judged). */
export function secretWriting(target: object): SecretWriting | undefined {
  return (target as { [SECRET_WRITING]?: SecretWriting })[SECRET_WRITING];
}

/** `webhook` with another bind host, still naming its keys where they were written. */
export function withHost<T extends { host: string }>(webhook: T, host: string): T {
  // The values a `${VAR}` gave stay noted, but for a host given another value (`--host`).
  const copy = keepGiven(webhook, { ...webhook, host }, host === webhook.host ? [] : ["host"]);
  if (secretAsWritten(webhook)) noteSecretAsWritten(copy);
  const checked = (webhook as { [SECRET_CHECKED]?: string })[SECRET_CHECKED];
  if (checked !== undefined) noteSecretChecked(copy, checked);
  const from = secretFrom(webhook);
  if (from !== undefined) noteSecretFrom(copy, from);
  const writing = secretWriting(webhook);
  if (writing !== undefined) noteSecretWriting(copy, writing);
  const at = (webhook as Noted)[WRITTEN_AT];
  return at === undefined ? copy : Object.defineProperty(copy, WRITTEN_AT, { value: at, enumerable: false });
}
