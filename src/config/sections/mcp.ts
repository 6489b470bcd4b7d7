import { z } from "zod";
import { clientMetadataUrlProblem } from "../clientMetadataUrl.js";
import { cutJson, describe, quotingIssue } from "../describe.js";
import { redirectUriPort, redirectUriProblem } from "../redirectUri.js";
import { FINITE_SECONDS, MAX_TIMER_SECONDS } from "../timerSeconds.js";
import { urlAuthorityProblem } from "../urlAuthorityProblem.js";
import { withoutUrlCredentials } from "../urlCredentials.js";
import { userAgentProblem } from "../userAgent.js";

/**
 * `mcp_servers` (spec mcp-client 2.1, 2.2, 2.4). String values stay raw here: `${VAR}` is rendered at
 * connect time, so a secret added to `.env` later is picked up without a restart.
 */

const UNIT_SECONDS: ReadonlyArray<readonly [RegExp, number]> = [
  [/^(?:ms|msecs?|milliseconds?)$/, 0.001],
  [/^(?:s|secs?|seconds?)$/, 1],
  [/^(?:m|mins?|minutes?)$/, 60],
  [/^(?:h|hrs?|hours?)$/, 3600],
];

/**
 * `"30s"`, `"10m"`, `"1h"`, and Go's `"1h30m"` or `"2m 30s"` (a duration as other tools write it): the
 * number of seconds to write instead.
 */
function unitHint(value: unknown): string {
  if (typeof value !== "string" || !/^\s*(?:\d+(?:\.\d+)?\s*[a-z]+\s*)+$/i.test(value)) return "";
  let seconds = 0;
  for (const [, amount, name] of value.matchAll(/(\d+(?:\.\d+)?)\s*([a-z]+)/gi)) {
    const unit = UNIT_SECONDS.find(([re]) => re.test((name as string).toLowerCase()));
    if (unit === undefined) return "";
    seconds += Number(amount) * unit[1];
  }
  return seconds > 0 ? ` — write the number of seconds alone: ${Number(seconds.toFixed(3))}` : "";
}

/** `.inf`, `.nan`, `1e400` or "Infinity" (not "30s", which is no number either). */
const nonFinite = (value: unknown): boolean =>
  (typeof value === "number" && !Number.isFinite(value)) ||
  (typeof value === "string" && Math.abs(Number(value)) === Number.POSITIVE_INFINITY);

/**
 * A duration in seconds (numbers, or numeric strings); the message names the unit the user must give.
 * Values above MAX_TIMER_SECONDS count as it (`timeout: 3000000` for "practically never").
 */
function seconds<D extends number | undefined>(fallback: D, options: { positive?: boolean } = {}) {
  return z
    .unknown()
    .optional()
    .transform((value, ctx): D extends number ? number : number | undefined => {
      if (value === undefined || value === null) return fallback as never;
      const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
      if (typeof n !== "number" || !Number.isFinite(n) || n < 0 || (options.positive === true && n === 0)) {
        // A finite number out of range is told the range: above 0, or (for a key that takes 0) 0 or more.
        const range =
          typeof n !== "number" || !Number.isFinite(n)
            ? ""
            : options.positive === true
              ? "a positive number of "
              : "0 or more ";
        ctx.addIssue(
          quotingIssue(
            value,
            (quoted, given) =>
              `expected ${range}seconds, got ${quoted}${given ? "" : nonFinite(value) ? ` — ${FINITE_SECONDS}` : unitHint(value)}`,
          ),
        );
        return z.NEVER;
      }
      return Math.min(n, MAX_TIMER_SECONDS) as never;
    });
}

const TRUTHY = new Set(["true", "yes", "y", "on", "1", "enabled"]);
const FALSY = new Set(["false", "no", "n", "off", "0", "disabled", ""]);

/** `resources: yes`, `prompts: 1` and friends ("bool-like" values). */
const boolLike = z
  .unknown()
  .optional()
  .transform((value, ctx): boolean => {
    if (value === undefined || value === null) return false;
    if (typeof value === "boolean") return value;
    // Only a word or a number is bool-like: String([true]) is "true" and String([]) is "".
    const text =
      typeof value === "string" || typeof value === "number" ? String(value).trim().toLowerCase() : "?";
    if (TRUTHY.has(text)) return true;
    if (FALSY.has(text)) return false;
    ctx.addIssue(quotingIssue(value, (quoted) => `expected true or false, got ${quoted}`));
    return z.NEVER;
  });

/** A value that is no text but was perhaps meant as one (a tool named `7`, `true`). */
const numberOrBoolean = (value: unknown): boolean =>
  typeof value === "number" || typeof value === "bigint" || typeof value === "boolean";

/** Where an MCP server entry is read from: config.yaml, or JSON (an install link's entry, `svc mcp import`). */
export type EntrySource = "yaml" | "json";

/**
 * What to do about the numbers and booleans of a refused `include` / `exclude`. config.yaml's reach the
 * schema as the text written (yamlNodes.ts), so these come from JSON (an install link's entry), where that
 * text is not known: `1.50` is the number 1.5 there, so the name is not guessed. And of its nulls: in
 * config.yaml an entry left empty or written `~` (a `Null` there is its text), in JSON a null. A null alone
 * (JSON's `"include": null`, what Python's `json.dumps(None)` writes; config.yaml's is the key left unset) names
 * no tool either: `nullFilterHint`.
 */
function quoteHint(input: unknown, source: EntrySource, key: ToolFilterKey, beside?: string): string {
  if (numberOrBoolean(input)) return " — put it in quotes if it is meant as text";
  if (input === null) return nullFilterHint(key, beside);
  const values = Array.isArray(input) ? input.filter(numberOrBoolean) : [];
  const nulls = Array.isArray(input) ? input.filter((value) => value === null).length : 0;
  const hints: string[] = [];
  if (values.length > 0) {
    const named = values.slice(0, 3).map(describe);
    if (values.length > 3) named.push(`${values.length - 3} more`);
    const shown = named.length === 1 ? named[0] : `${named.slice(0, -1).join(", ")} and ${named.at(-1)}`;
    hints.push(`put ${shown} in quotes if ${values.length === 1 ? "it is" : "they are"} meant as text`);
  }
  const one = nulls === 1;
  // config.yaml's `Null` in a list is its text (yamlNodes.ts): a null left is an entry left empty or `~`.
  if (nulls > 0 && source === "yaml")
    hints.push(
      `${one ? "an entry" : `${nulls} entries`} left empty or written ~ (null to YAML) ${one ? "names" : "name"} no tool: remove ${one ? "it" : "them"}, or put '~' in quotes if it is meant as text`,
    );
  else if (nulls > 0)
    hints.push(
      `${one ? "a null entry names" : `${nulls} null entries name`} no tool: remove ${one ? "it" : "them"}`,
    );
  return hints.map((hint) => ` — ${hint}`).join("");
}

/**
 * A null alone as a tool filter: the key is removed to leave that filter out, or the tools are named. What
 * removing it leads to depends on the filter written beside it (`beside`, as the entry writes it: `exclude`,
 * Gemini CLI's `excludeTools`): with none, every tool of the server (for `include`) or no tool left out (for
 * `exclude`); with one, that filter alone decides.
 */
function nullFilterHint(key: ToolFilterKey, beside: string | undefined): string {
  const removed =
    beside !== undefined
      ? `let ${beside} alone filter the tools`
      : key === "include"
        ? "expose every tool of the server"
        : "leave no tool out";
  return ` — a null names no tool: remove the key to ${removed}, or name the tools to ${key === "include" ? "expose" : "leave out"}`;
}

/** The two tool filters of `tools`. */
type ToolFilterKey = "include" | "exclude";

/**
 * Whether a tool filter written as `value` filters the tools: a null does not, nor an empty `exclude` (it leaves
 * no tool out); an empty `include` does (it exposes none). For what a null beside it says (nullFilterHint).
 */
export const filtersTools = (key: ToolFilterKey, value: unknown): boolean =>
  value != null && !(key === "exclude" && Array.isArray(value) && value.length === 0);

const EXPECTED_NAMES = "expected a tool name, a glob, or a list of them";

/**
 * Tool names: a name or a list of them; a number or boolean written in config.yaml is its text (yamlNodes.ts).
 * `beside` names the other filter written beside this one, for what a null alone says (nullFilterHint).
 */
const stringList = (source: EntrySource, key: ToolFilterKey, beside?: string) =>
  z
    .union([z.string().min(1), z.array(z.string().min(1))], {
      error: (issue) =>
        `${EXPECTED_NAMES}, got ${describe(issue.input)}${quoteHint(issue.input, source, key, beside)}`,
    })
    .transform((v) => (typeof v === "string" ? [v] : v));

const isMapping = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Each tool filter of `tools`, with the other one. */
const FILTER_PAIRS = [
  ["include", "exclude"],
  ["exclude", "include"],
] as const;

const toolsPolicy = (source: EntrySource) =>
  z
    .strictObject({
      // A null alone is refused below, where the filter beside it is seen (nullFilterHint).
      include: stringList(source, "include").nullable().optional(),
      exclude: stringList(source, "exclude").nullable().optional(),
      resources: boolLike,
      prompts: boolLike,
    })
    .superRefine(
      (tools, ctx) => {
        for (const [key, other] of FILTER_PAIRS)
          if (tools[key] === null)
            ctx.addIssue({
              code: "custom",
              path: [key],
              input: null,
              message: `${EXPECTED_NAMES}, got null${nullFilterHint(key, filtersTools(other, tools[other]) ? other : undefined)}`,
            });
      },
      // Said beside another key's refusal too (`exclude: [7]`), as each filter is refused on its own.
      { when: (payload) => isMapping(payload.value) },
    )
    .transform(({ include, exclude, ...rest }) => ({
      ...(include == null ? {} : { include }),
      ...(exclude == null ? {} : { exclude }),
      ...rest,
    }))
    .default({ resources: false, prompts: false });

export const toolsPolicySchema = toolsPolicy("yaml");
/** `tools` given as JSON (`svc mcp import` reads it from another client's file), refused in JSON's words. */
export const jsonToolsPolicySchema = toolsPolicy("json");
/**
 * A tool list given as JSON under another client's key (Gemini CLI's `includeTools`, read as `include`; its
 * `excludeTools` and Roo Code's `disabledTools`, as `exclude`; GitHub Copilot's `tools` list, as `include`),
 * refused in the words of the key svc reads it as; `beside` names the filters the entry writes beside it.
 */
export const jsonToolNamesSchema = (key: ToolFilterKey, beside?: string) => stringList("json", key, beside);

/**
 * `transport` values: `sse`, `stdio`, and the names other clients give Streamable HTTP (svc's default):
 * `http` (Claude Code, VS Code), `streamable-http` (Roo Code), `streamableHttp` (Cline, Cursor), `streamable_http`.
 */
export const HTTP_TRANSPORT_NAMES = ["http", "streamable_http", "streamable-http", "streamableHttp"] as const;
const TRANSPORT_NAMES = ["sse", ...HTTP_TRANSPORT_NAMES, "stdio"] as const;

const SECRET_METHODS = new Set(["client_secret_basic", "client_secret_post", "client_secret_jwt"]);

export const oauthSchema = z
  .strictObject({
    flow: z.enum(["browser", "device"]).optional(),
    timeout: seconds(300, { positive: true }),
    client_id: z.string().min(1).optional(),
    client_secret: z.string().min(1).optional(),
    token_endpoint_auth_method: z
      .enum(["none", "client_secret_basic", "client_secret_post", "private_key_jwt", "client_secret_jwt"])
      .optional(),
    client_name: z.string().min(1).optional(),
    scope: z
      .union([z.string(), z.array(z.string().min(1))], {
        error: (i) =>
          `expected a scope or a list of scopes (read write, or [read, write]), got ${describe(i.input)}`,
      })
      .transform((v) => (Array.isArray(v) ? v.join(" ") : v))
      .optional(),
    redirect_uri: z
      .string()
      .min(1)
      .refine((uri) => !uri.includes("#"), "a redirect URI must not have a fragment (#...) — remove it")
      .superRefine((uri, ctx) => {
        // A ${VAR} is rendered when a login binds its listener, where the same rules are checked again.
        const problem = uri.includes("${") || uri.includes("#") ? undefined : redirectUriProblem(uri);
        if (problem !== undefined) ctx.addIssue({ code: "custom", message: problem });
      })
      .optional(),
    redirect_port: z
      .number({ error: (i) => `expected a port number (1-65535), got ${describe(i.input)}` })
      .int()
      .min(1)
      .max(65535)
      .optional(),
    client_metadata_url: z
      .string()
      .min(1)
      .superRefine((url, ctx) => {
        // A ${VAR} is rendered at connect time, where the same rules are checked again.
        const problem = url.includes("${") ? undefined : clientMetadataUrlProblem(url);
        if (problem !== undefined)
          ctx.addIssue({
            code: "custom",
            message: `${problem} (a client metadata document URL is https, with a path, and no fragment, userinfo or . / .. segments) — correct it, or remove it to register the client dynamically`,
          });
      })
      .optional(),
    cimd: z.boolean().optional(),
    resource_indicator: z.boolean().optional(),
    consent_prompt: z.boolean().optional(),
    /** Empty or null is ignored. */
    user_agent: z
      .string()
      .nullable()
      .optional()
      .superRefine((value, ctx) => {
        // A ${VAR} is rendered when a login or refresh runs, where the same rule is checked again.
        const problem =
          typeof value === "string" && !value.includes("${") ? userAgentProblem(value) : undefined;
        if (problem !== undefined) ctx.addIssue({ code: "custom", message: problem });
      })
      .transform((v) => (v === null || v === undefined || v.trim() === "" ? undefined : v)),
  })
  .superRefine((o, ctx) => {
    // The listener takes redirect_port while the server is sent redirect_uri's port: the redirect would go nowhere.
    const uriPort = o.redirect_uri === undefined ? undefined : redirectUriPort(o.redirect_uri);
    if (uriPort !== undefined && o.redirect_port !== undefined && uriPort !== o.redirect_port) {
      ctx.addIssue({
        code: "custom",
        path: ["redirect_port"],
        message: `${o.redirect_port}, but oauth.redirect_uri names port ${uriPort} — set only one of them`,
      });
    }
    const method = o.token_endpoint_auth_method;
    if (method === "private_key_jwt") {
      ctx.addIssue({
        code: "custom",
        path: ["token_endpoint_auth_method"],
        message:
          "private_key_jwt is not supported (svc has no client key setting) — use client_secret_jwt, client_secret_basic, client_secret_post or none",
      });
    } else if (
      method !== undefined &&
      SECRET_METHODS.has(method) &&
      o.client_id !== undefined &&
      o.client_secret === undefined
    ) {
      ctx.addIssue({
        code: "custom",
        path: ["client_secret"],
        message: `missing — token_endpoint_auth_method ${method} needs the client secret issued with client_id ${o.client_id}`,
      });
    }
  });
export type OAuthSettings = z.infer<typeof oauthSchema>;

/**
 * The spec leaves sampling's inner fields "not shown": keys other than svc's are accepted and ignored
 * (a mapping written for another client must not stop the gateway), and the common spellings
 * `max_tokens_cap` and `max_rpm` stand for `max_tokens` and `max_requests_per_minute`. The spellings are
 * checked under their own names, so a bad value is named as written (`sampling.max_rpm`).
 */
const SAMPLING_KEYS = new Set([
  "enabled",
  "max_tokens",
  "max_tokens_cap",
  "model",
  "max_requests_per_minute",
  "max_rpm",
  "timeout",
]);

function samplingKeysOnly(raw: unknown): unknown {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return raw;
  return Object.fromEntries(Object.entries(raw).filter(([k]) => SAMPLING_KEYS.has(k)));
}

const positiveInt = z.number().int().positive();

/** Sampling policy (fields defined by svc): off unless enabled; answered by the agent runner. */
const samplingFields = z
  .strictObject({
    enabled: z.boolean().default(false),
    /** Upper bound on the server's `maxTokens`; larger requests are clamped to it. */
    max_tokens: positiveInt.optional(),
    max_tokens_cap: positiveInt.optional(),
    /** Passed to the runner as the model to use, overriding the server's model preferences. */
    model: z.string().min(1).optional(),
    /** Requests above this rate are refused with an error (a sliding one-minute window). */
    max_requests_per_minute: positiveInt.optional(),
    max_rpm: positiveInt.optional(),
    timeout: seconds(300, { positive: true }),
  })
  .transform(({ max_tokens, max_tokens_cap, max_requests_per_minute, max_rpm, ...rest }) => ({
    ...rest,
    max_tokens: max_tokens ?? max_tokens_cap ?? 4096,
    max_requests_per_minute: max_requests_per_minute ?? max_rpm ?? 10,
  }))
  .default({ enabled: false, max_tokens: 4096, max_requests_per_minute: 10, timeout: 300 });
export const samplingSchema = z.preprocess(samplingKeysOnly, samplingFields);
export type SamplingSettings = z.infer<typeof samplingFields>;

export const elicitationSchema = z
  .strictObject({
    enabled: z.boolean().default(true),
    timeout: seconds(300, { positive: true }),
    /** The answer to a form when nobody is at a terminal: `decline`, or `defaults` (accept with each field's default). */
    unattended: z.enum(["decline", "defaults"]).default("decline"),
  })
  .default({ enabled: true, timeout: 300, unattended: "decline" });
export type UnattendedElicitation = z.infer<typeof elicitationSchema>["unattended"];

/** Checked where it is written, so a bad value is named `lifecycle.<key>` (hoistLifecycle lifts only good ones). */
const lifecycleSchema = z.strictObject({
  idle_timeout_seconds: seconds(undefined),
  max_lifetime_seconds: seconds(undefined),
});

const clientCert = z.union(
  [
    z.string().min(1),
    z.tuple([z.string().min(1), z.string().min(1)]),
    z.tuple([z.string().min(1), z.string().min(1), z.string()]),
  ],
  {
    error: (i) => `expected a PEM path, [cert, key] or [cert, key, password], got ${describeCert(i.input)}`,
  },
);

/** A wrong client_cert for a message: a list's third entry onwards (where the key password goes) is not shown. */
function describeCert(input: unknown): string {
  if (!Array.isArray(input) || input.length <= 2) return describe(input);
  return `a list of ${input.length} entries, [${input.slice(0, 2).map(describe).join(", ")}, …] (the rest not shown: the third is the key's password)`;
}

/**
 * A value of `args`, `env` or `headers`: a string, a number (as written, see yamlNodes.ts) or a boolean
 * (`true`/`false`), all passed on as text; `KEY:` or a `null` entry alone is an error that says to quote "".
 */
const textValue = (empty: string) =>
  z.union([z.string(), z.number(), z.boolean()], {
    error: (i) =>
      i.input === null || i.input === undefined
        ? `has no value — ${empty}`
        : `expected a string, got ${describe(i.input)}`,
  });

const argText = textValue(`write "" for an empty argument, or remove the entry`).transform(String);
const keyText = textValue(`write KEY: "" for an empty string, or remove the key`).transform(String);

const entryShape = {
  // Spaces alone name no program: every start would fail with "command not found", as an empty one would.
  command: z
    .string()
    .min(1)
    .refine((command) => command === "" || command.trim() !== "", {
      error: "is only spaces — write the program to run (for example command: npx), or leave the key out",
    })
    .optional(),
  args: z.array(argText).default([]),
  env: z
    .record(
      // The OS keeps `NAME=value` strings: a name holding "=" would set another variable (T_A=1: x sets T_A).
      z.string().regex(/^[^=\0]+$/, {
        error: (i) =>
          `${describe(i.input)} is not a variable name (a name is not empty and holds no "=") — write NAME: value`,
      }),
      keyText,
    )
    .default({}),
  url: z.string().min(1).optional(),
  headers: z
    .record(
      z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, {
        error: (i) =>
          `${describe(i.input)} is not a valid HTTP header name (letters, digits and - _ . ! # $ % & ' * + ^ \` | ~; no spaces or colons)`,
      }),
      keyText,
    )
    .default({}),
  ssl_verify: z
    .union([z.boolean(), z.string().min(1)], {
      error: (i) => `expected true, false or a CA bundle path, got ${describe(i.input)}`,
    })
    .default(true),
  client_cert: clientCert.optional(),
  client_key: z.string().min(1).optional(),
  enabled: z.boolean().default(true),
  timeout: seconds(300, { positive: true }),
  connect_timeout: seconds(60, { positive: true }),
  protocol: z.enum(["auto", "stateless", "legacy"]).default("auto"),
  supports_parallel_tool_calls: z.boolean().default(false),
  skip_preflight: z.boolean().default(false),
  transport: z.enum(TRANSPORT_NAMES).optional(),
  keepalive_interval: seconds(undefined),
  lazy: z.boolean().default(false),
  idle_timeout_seconds: seconds(0),
  max_lifetime_seconds: seconds(0),
  lifecycle: lifecycleSchema.optional(),
  tools: toolsPolicySchema,
  auth: z.enum(["oauth", "none"]).optional(),
  oauth: oauthSchema.optional(),
  sampling: samplingSchema,
  elicitation: elicitationSchema,
  /**
   * `full` (default) or anything else, which is treated as `untrusted` — non-string values too
   * (`trust: true`, `trust: 1`): an unrecognized trust value must fail safe, not stop the gateway.
   */
  trust: z
    .unknown()
    .optional()
    .transform((v) => (v === undefined || v === null ? "full" : typeof v === "string" ? v : cutJson(v))),
};

/** The keys of a server entry (other clients' files write some of them in other shapes: `oauth`, `trust`). */
export const MCP_ENTRY_KEYS: readonly string[] = Object.keys(entryShape);

/**
 * `headers` names svc's HTTP client (undici's fetch) sets from each request itself and never sends as
 * configured: it drops `Host` (a request carries its url's host), refuses `Transfer-Encoding`, `Keep-Alive`,
 * `Upgrade` and `Expect` (every request fails), and sizes the body by `Content-Length` (a request with another
 * body hangs until the connect times out). Also the MCP transport's own `Mcp-Session-Id` and
 * `MCP-Protocol-Version` (copied from a captured request): a stale session id on the `initialize` request
 * makes a stateful server refuse it (400 "No valid session ID provided"). Such a header is left out of the
 * requests, with a warning.
 */
export const CLIENT_SET_HEADERS: ReadonlySet<string> = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "keep-alive",
  "upgrade",
  "expect",
  "mcp-session-id",
  "mcp-protocol-version",
]);

/** The `headers` of a url entry that are sent: all but CLIENT_SET_HEADERS. */
export function sentHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).filter(([key]) => !CLIENT_SET_HEADERS.has(key.toLowerCase())),
  );
}

/**
 * Why `url` cannot be a remote MCP endpoint (not a URL, or not http/https), or undefined when it can.
 * `shown` is what the message quotes (the url as written, so no rendered secret is echoed).
 */
export function httpUrlProblem(url: string, shown = url): string | undefined {
  // `localhost:8080/mcp` parses as scheme "localhost": a host (and port) written without http://; so does
  // `[::1]:8080/mcp` not parse at all.
  if (!url.includes("://") && /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d+)?(?:\/[^\s?#@]*)?$/.test(url)) {
    const fix =
      url === shown ? `write http://${url} (https:// for TLS)` : "start it with http:// or https://";
    return `expected an http:// or https:// URL, got ${describe(withoutUrlCredentials(shown))} (no http:// or https:// at its start) — ${fix}`;
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    const quoted = describe(withoutUrlCredentials(shown));
    return (
      userinfoEndsEarly(url) ??
      urlAuthorityProblem(url, shown, quoted) ??
      `expected an http:// or https:// URL, got ${quoted}`
    );
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
    return `expected an http:// or https:// URL, got ${describe(withoutUrlCredentials(shown))} (${parsed.protocol.slice(0, -1)} is not supported)`;
  // `http:///mcp` (the host left out) parses with the path's first segment as the host: "mcp".
  if (/^https?:\/\/\//i.test(url.trim()))
    return `${describe(withoutUrlCredentials(shown))} names no host (three slashes after ${parsed.protocol}) — write the server's host: ${parsed.protocol}//<host>/mcp`;
  // Port 0 means "any free port" to a listener; nothing can be connected to there.
  if (parsed.port === "0")
    return `${describe(withoutUrlCredentials(shown))} names port 0, which no server listens on — write the port the MCP server listens on`;
  return undefined;
}

/**
 * Why a url that does not parse fails, when its `user:password@` holds a `/`, `?` or `#` (a generated
 * password, a base64 token): the host part ends at the first of them, so the rest of the password reads as
 * a port (`me:s3cr/t@host` names host "me", port "s3cr"). What comes before an `@` after the first of them is
 * taken for a user:password@ (a space in it too: `me:s3cr et/x@host`), never read as a port or host, which would
 * quote part of the password. The credentials are not quoted, nor the url that holds them.
 */
function userinfoEndsEarly(url: string): string | undefined {
  const userinfo = /^[a-z][a-z0-9+.-]*:\/\/([^@]*)@/i.exec(url)?.[1];
  if (userinfo === undefined || !userinfo.includes(":")) return undefined;
  const enders = ["/", "?", "#"].filter((c) => userinfo.includes(c));
  // `host:port/...` before an @ of the path or query (`?email=me@example.com`) is no user:password@.
  if (enders.length === 0 || /^[^:]*:\d*$/.test(userinfo.split(/[/?#]/)[0] as string)) return undefined;
  const space = /\s/.test(userinfo) ? ", a space as %20" : "";
  return `its user:password@ holds ${enders.map((c) => `"${c}"`).join(" and ")}, which ends the host part of a URL (so the url reads as another host) — write it percent-encoded (/ as %2F, ? as %3F, # as %23${space}, and a % as %25), or leave user:password@ out and send the credentials in an Authorization header under headers`;
}

/** Whether two `transport` values name one transport (`http` and `streamable-http` are two spellings of one). */
function sameTransport(a: unknown, b: unknown): boolean {
  const names: readonly unknown[] = HTTP_TRANSPORT_NAMES;
  return a === b || (names.includes(a) && names.includes(b));
}

/**
 * `type:` (how Claude Code's `.mcp.json` and VS Code's `mcp.json` name the transport) is read as
 * `transport:`; beside a `transport` naming the same transport (`type: streamable-http`, `transport:
 * http`) it is one setting, beside one naming another a problem saying so (`conflict`).
 */
function typeAsTransport(entry: Record<string, unknown>): {
  entry: Record<string, unknown>;
  conflict?: string;
} {
  if (!Object.hasOwn(entry, "type")) return { entry };
  const { type, ...rest } = entry;
  if (rest.transport === undefined) return { entry: { ...rest, transport: type } };
  if (sameTransport(rest.transport, type)) return { entry: rest };
  return {
    entry: rest,
    // Not quoted: either may come from a ${VAR} of .env, whose value a message never shows.
    conflict:
      "names another transport than transport — type is how Claude Code and VS Code write transport: keep one of them",
  };
}

/** `lifecycle: { idle_timeout_seconds, max_lifetime_seconds }` fills the top-level keys when they are absent. */
function hoistLifecycle(entry: Record<string, unknown>): Record<string, unknown> {
  const lifecycle = entry.lifecycle;
  if (lifecycle === null || typeof lifecycle !== "object" || Array.isArray(lifecycle)) return entry;
  const inner = lifecycle as Record<string, unknown>;
  // A bad value stays under lifecycle, where lifecycleSchema names it; a good one fills the top-level key.
  const lifted = (key: "idle_timeout_seconds" | "max_lifetime_seconds") =>
    entry[key] ?? (lifecycleSchema.shape[key].safeParse(inner[key]).success ? inner[key] : undefined);
  return {
    ...entry,
    idle_timeout_seconds: lifted("idle_timeout_seconds"),
    max_lifetime_seconds: lifted("max_lifetime_seconds"),
  };
}

/**
 * Where a `__proto__` key sits below an entry's own keys (`env: {"__proto__": ...}` in an install link's
 * or an imported file's JSON, where JSON.parse makes it an own key): config.yaml refuses such a key, so an
 * entry written with it would stop every later command and the gateway. Undefined when there is none.
 */
function reservedKeyPath(
  value: unknown,
  path: readonly (string | number)[] = [],
): (string | number)[] | undefined {
  if (value === null || typeof value !== "object") return undefined;
  for (const [key, inner] of Object.entries(value)) {
    const at = [...path, Array.isArray(value) ? Number(key) : key];
    if (key === "__proto__" && path.length > 0) return at;
    const found = reservedKeyPath(inner, at);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** An MCP server entry read from `source` (the words of a refusal differ: see quoteHint). */
const serverSchema = (source: EntrySource) =>
  z.preprocess(
    (raw, ctx) => {
      const reserved = reservedKeyPath(raw);
      if (reserved !== undefined)
        ctx.addIssue({
          code: "custom",
          path: reserved,
          message: '"__proto__" cannot be used as a name (JavaScript reserves it) — rename it',
        });
      if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return raw;
      const typed = typeAsTransport(raw as Record<string, unknown>);
      if (typed.conflict !== undefined)
        ctx.addIssue({ code: "custom", path: ["type"], message: typed.conflict });
      return hoistLifecycle(typed.entry);
    },
    z
      .strictObject(source === "yaml" ? entryShape : { ...entryShape, tools: toolsPolicy(source) })
      .superRefine((entry, ctx) => {
        const hasCommand = entry.command !== undefined;
        const hasUrl = entry.url !== undefined;
        if (hasCommand === hasUrl) {
          ctx.addIssue({
            code: "custom",
            message: hasCommand
              ? "has both command and url — keep command (stdio) or url (HTTP), not both"
              : "needs command (a local stdio server) or url (a remote server)",
          });
        }
        // A url with ${VAR} is checked once rendered, at connect time.
        if (hasUrl && !entry.url?.includes("${")) {
          const problem = httpUrlProblem(entry.url as string);
          if (problem !== undefined) ctx.addIssue({ code: "custom", path: ["url"], message: problem });
        }
        // `stdio` and the Streamable HTTP spellings are accepted as other clients' configs write them.
        if (
          entry.transport !== undefined &&
          hasCommand !== hasUrl &&
          hasCommand !== (entry.transport === "stdio")
        ) {
          const fits = entry.transport === "stdio" ? "command (stdio) servers" : "url servers";
          ctx.addIssue({
            code: "custom",
            path: ["transport"],
            message: `${entry.transport} applies to ${fits} only`,
          });
        }
        if (hasCommand && entry.auth === "oauth") {
          ctx.addIssue({ code: "custom", path: ["auth"], message: "oauth applies to url servers only" });
        }
        if (typeof entry.client_cert === "string" || entry.client_cert === undefined) return;
        if (entry.client_key !== undefined) {
          ctx.addIssue({
            code: "custom",
            path: ["client_key"],
            message: "client_cert is already [cert, key] — drop client_key",
          });
        }
      }),
  );

/** An entry of config.yaml's `mcp_servers`. */
export const mcpServerSchema = serverSchema("yaml");
/** An entry given as JSON: an install link's, one `svc mcp import` reads from another client's file. */
export const jsonMcpServerSchema = serverSchema("json");
export type McpServerEntry = z.infer<typeof mcpServerSchema>;

export const mcpServersSchema = z
  .record(
    z
      .string()
      .min(1, "a server name cannot be empty")
      // `mcp_servers: {${NAME}: ...}`: config.yaml replaces a ${VAR} in values, never in a key.
      .refine((name) => !name.includes("${"), {
        message: "a ${VAR} is replaced in values only, never in a name: write the server's name itself",
      }),
    mcpServerSchema,
  )
  .default({});
export type McpServers = z.infer<typeof mcpServersSchema>;

/** Transport kind of an entry. */
export function transportKind(entry: McpServerEntry): "stdio" | "http" | "sse" {
  if (entry.command !== undefined) return "stdio";
  return entry.transport === "sse" ? "sse" : "http";
}

/**
 * `trust: full` is the only trusted value; anything else (typos, another case such as `Full`) is an
 * unrecognized value, so untrusted: a security setting fails safe.
 */
export function isTrusted(entry: Pick<McpServerEntry, "trust">): boolean {
  return entry.trust === "full";
}
