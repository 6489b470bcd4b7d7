import { z } from "zod";
import { apiPathInBaseUrl } from "../apiPathInBaseUrl.js";
import { describe, quotingIssue } from "../describe.js";
import { bindHost } from "../host.js";
import { unsetVariablesIn } from "../interpolate.js";
import { nearMiss } from "../nearMiss.js";
import { timerSeconds } from "../timerSeconds.js";
import { WEBHOOK_SETTINGS, webhookSchema } from "./webhook.js";

/**
 * An id written as text or as a number (`home_channel: -1001234567890`), kept as text; `what` names it in the
 * message for anything else (a list of chats, a mapping), where zod would say only "Invalid input".
 */
const idText = (what: string) =>
  z.union([z.string(), z.number()], {
    error: (i) => `expected text or a number (${what}), got ${describe(i.input)}`,
  });

/**
 * WeCom's `agent_id`: a whole number, written as one or as its digits (`${WECOM_AGENT_ID}` gives text). Other
 * text was sent as `"agentid": null` (Number("abc") is NaN), failing every delivery after a start that said
 * nothing of it. A `${VAR}` nothing sets stays its text, which the start names as for any platform setting
 * (unsetPlatformVariables.ts). The value is not quoted (a ${VAR} may give it).
 */
function agentId(value: string | number, ctx: z.RefinementCtx): number | string {
  const id = typeof value === "number" ? value : /^\s*\d+\s*$/.test(value) ? Number(value) : Number.NaN;
  if (Number.isSafeInteger(id) && id > 0) return id;
  if (typeof value === "string" && unsetVariablesIn(value).length > 0) return value;
  ctx.addIssue({
    code: "custom",
    message:
      "not an AgentId — write the app's AgentId, the whole number WeCom's admin shows (agent_id: 1000002)",
    input: value,
  });
  return z.NEVER;
}

/**
 * WhatsApp's `api_version`: a Graph API version is written with its `v` (`v21.0`). Without it (`21.0`, or the
 * number YAML reads `21.0` as) the request path names no version, and the Graph API takes `21.0` for an object
 * id, refusing every message ("Object with ID '21.0' does not exist") after a start that said nothing of it.
 */
function graphApiVersion(value: string | number, ctx: z.RefinementCtx): string {
  const written = typeof value === "number" && Number.isInteger(value) ? `${value}.0` : String(value).trim();
  if (typeof value === "string" && !/^\d+(?:\.\d+)?$/.test(written)) return value;
  ctx.addIssue({
    code: "custom",
    message: /^\d+(?:\.\d+)?$/.test(written)
      ? `no Graph API version — write it with its v: api_version: v${written}`
      : "no Graph API version — write one with its v: api_version: v21.0",
    input: value,
  });
  return z.NEVER;
}

/** Settings every delivery platform has. */
const base = {
  enabled: z.boolean().default(false),
  home_channel: idText("one chat, channel or address")
    .transform((v) => String(v))
    .optional(),
  timeout_seconds: timerSeconds(15),
};

const text = z.string().min(1);

/**
 * A platform token: it travels in an HTTP header (`Authorization: Bearer`, `Bot`) or the request path, so a
 * character outside printable ASCII (a curly quote or zero-width space pasted with it) failed every request
 * before it left, reported as a connection failure and retried. The value is not quoted (a ${VAR} may give it).
 */
const token = text.superRefine((value, ctx) => {
  const at = value.search(/[^\x20-\x7e]/);
  if (at < 0) return;
  const code = (value.codePointAt(at) as number).toString(16).toUpperCase().padStart(4, "0");
  ctx.addIssue({
    code: "custom",
    message: `holds U+${code} at character ${at + 1}, which an HTTP request cannot carry — write the token again from the platform's page, printable ASCII only (a quote or an invisible character came with the copy)`,
    input: value,
  });
});

/**
 * Why `value` is no http(s) URL: `localhost:8080` (or `[::1]:8080`) would be read as the scheme `localhost:`
 * (or not at all), and fetch refuses any other scheme, so every delivery would fail. The base to write is
 * named without a query or fragment (refused below anyway, and not quoted: it may carry a key).
 */
function apiUrlProblem(value: string, given = false): string | undefined {
  if (/^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]):\d+(?:[/?#]|$)/.test(value))
    return `no scheme — write http://${given ? "<host:port>" : value.replace(/[?#].*$/s, "")} (or https://)`;
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    return "not a URL — write http://host:port or https://host";
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
    return `${parsed.protocol.slice(0, -1)} is not supported — the platform's API is reached at an http:// or https:// URL`;
  return undefined;
}

/**
 * A platform API address. `user:password@` in it is refused: a request to such a URL cannot be made
 * (fetch refuses it, quoting the whole URL), so every delivery would fail; credentials go in the
 * platform's own keys.
 */
const apiUrl = z
  .string()
  .superRefine((value, ctx) => {
    if (apiUrlProblem(value) !== undefined)
      ctx.addIssue(
        quotingIssue(value, (_quoted, given) => apiUrlProblem(value, given) ?? "", { abort: true }),
      );
  })
  .refine(
    (value) => {
      try {
        const parsed = new URL(value);
        return parsed.username === "" && parsed.password === "";
      } catch {
        return true;
      }
    },
    {
      message:
        "holds a user name or password (user:password@) — remove it: svc cannot send credentials written in a URL; put them in the platform's own keys (token, password, ...)",
      abort: true,
    },
  );
/** A base the platform API's paths are appended to (`base_url`). */
const baseUrl = apiUrl.refine(
  // The API's paths are appended to the text as written: `https://mm.example/?token=…` would be asked
  // for as `/?token=…/api/v4/posts`, the path inside the query (and a key there quoted back by any
  // refusal that echoes the URL); `…#x` as the bare base. The value is not quoted.
  (value) => !/[?#]/.test(value),
  {
    message:
      "holds a query string or fragment (?… or #…) — remove it: svc adds the platform API's paths after the whole base_url, so every request would go to a wrong URL; put credentials in the platform's own keys (token, password, ...)",
    abort: true,
  },
);
/** A platform's `base_url`, without the path svc adds to each request itself (`apiPathInBaseUrl`). */
const platformBaseUrl = (platform: string) =>
  baseUrl.superRefine((value, ctx) => {
    if (apiPathInBaseUrl(platform, value) !== undefined)
      ctx.addIssue(
        quotingIssue(value, (_quoted, given) => apiPathInBaseUrl(platform, value, given) ?? "", {
          abort: true,
        }),
      );
  });
const url = (fallback: string, platform: string) => platformBaseUrl(platform).default(fallback);

/**
 * The SMTP server's host name. A connection URL (`smtp://user:password@host:587`, as many programs take
 * their mail server) is no host name: every connect fails on it, and its resolver error quotes the whole
 * text, password included, into each delivery's log line. The value is not quoted.
 */
const smtpHost = text
  .refine((value) => !/[@/]/.test(value), {
    message:
      "is a URL or holds a user name or password (smtp://user:password@host) — write the SMTP server's host name alone (host: smtp.example.com) and put the rest in port, secure, user and password",
    abort: true,
  })
  // `smtp.example.com:587` is no name a resolver finds: every connect would fail as a DNS error, retried.
  .superRefine((value, ctx) => {
    const host = bindHost(value, "platforms.email.port");
    if ("problem" in host)
      ctx.addIssue({
        code: "custom",
        message: host.problem,
        input: value,
        params: { quoting: host.quoting },
      });
  });

/** Per-platform schemas; key = canonical platform name (docs/delivery-targets.md). */
export const PLATFORM_SCHEMAS = {
  telegram: z.strictObject({
    ...base,
    token: token.optional(),
    base_url: url("https://api.telegram.org", "telegram"),
  }),
  discord: z.strictObject({
    ...base,
    token: token.optional(),
    base_url: url("https://discord.com", "discord"),
  }),
  slack: z.strictObject({ ...base, token: token.optional(), base_url: url("https://slack.com", "slack") }),
  signal: z.strictObject({
    ...base,
    number: text.optional(),
    base_url: url("http://127.0.0.1:8080", "signal"),
  }),
  whatsapp: z.strictObject({
    ...base,
    token: token.optional(),
    phone_number_id: z
      .union([text, z.number()], {
        error: (i) => `expected text or a number (the phone number ID), got ${describe(i.input)}`,
      })
      .transform(String)
      .optional(),
    api_version: z
      .union([text, z.number()], {
        error: (i) => `expected text (a Graph API version, such as v21.0), got ${describe(i.input)}`,
      })
      .transform(graphApiVersion)
      .default("v21.0"),
    base_url: url("https://graph.facebook.com", "whatsapp"),
  }),
  matrix: z.strictObject({
    ...base,
    token: token.optional(),
    base_url: url("https://matrix-client.matrix.org", "matrix"),
  }),
  mattermost: z.strictObject({
    ...base,
    token: token.optional(),
    base_url: platformBaseUrl("mattermost").optional(),
  }),
  dingtalk: z.strictObject({
    ...base,
    client_id: text.optional(),
    client_secret: text.optional(),
    robot_code: text.optional(),
    base_url: url("https://api.dingtalk.com", "dingtalk"),
  }),
  feishu: z.strictObject({
    ...base,
    app_id: text.optional(),
    app_secret: text.optional(),
    base_url: url("https://open.feishu.cn", "feishu"),
  }),
  wecom: z.strictObject({
    ...base,
    corp_id: text.optional(),
    corp_secret: text.optional(),
    agent_id: z
      .union([text, z.number()], {
        error: (i) => `expected a whole number (the app's AgentId), got ${describe(i.input)}`,
      })
      .transform(agentId)
      .optional(),
    base_url: url("https://qyapi.weixin.qq.com", "wecom"),
  }),
  weixin: z.strictObject({
    ...base,
    app_id: text.optional(),
    app_secret: text.optional(),
    base_url: url("https://api.weixin.qq.com", "weixin"),
  }),
  bluebubbles: z.strictObject({
    ...base,
    password: text.optional(),
    method: z.enum(["apple-script", "private-api"]).default("apple-script"),
    base_url: platformBaseUrl("bluebubbles").optional(),
  }),
  qqbot: z.strictObject({
    ...base,
    app_id: z
      .union([text, z.number()], {
        error: (i) => `expected text or a number (the bot's AppID), got ${describe(i.input)}`,
      })
      .transform(String)
      .optional(),
    client_secret: text.optional(),
    base_url: url("https://api.sgroup.qq.com", "qqbot"),
    token_url: apiUrl.default("https://bots.qq.com/app/getAppAccessToken"),
  }),
  sms: z.strictObject({
    ...base,
    account_sid: text.optional(),
    auth_token: text.optional(),
    from: text.optional(),
    base_url: url("https://api.twilio.com", "sms"),
  }),
  email: z
    .strictObject({
      ...base,
      host: smtpHost.optional(),
      port: z.number().int().min(1).max(65535).default(587),
      /** Implicit TLS; unset means true on port 465 (SMTPS), else STARTTLS when offered. */
      secure: z.boolean().optional(),
      user: text.optional(),
      password: text.optional(),
      from: text.optional(),
      subject: text.default("[svc] {route}"),
    })
    // The SMTP login needs both: with one alone every delivery failed (nodemailer's "Missing credentials
    // for PLAIN"), or the password was never sent.
    .superRefine((email, ctx) => {
      if (email.enabled !== true) return;
      if (email.user !== undefined && email.password === undefined)
        ctx.addIssue({
          code: "custom",
          path: ["password"],
          message: `required when user is set — the SMTP login needs both (a \${VAR} from .env works)`,
        });
      if (email.password !== undefined && email.user === undefined)
        ctx.addIssue({
          code: "custom",
          path: ["user"],
          message:
            "required when password is set — the SMTP login needs both; or remove password for a server that takes mail without a login",
        });
    }),
  home_automation: z.strictObject({
    ...base,
    token: token.optional(),
    base_url: url("http://homeassistant.local:8123", "home_automation"),
  }),
  // `enabled` left out: the target is there as without a section (gh needs no keys), with these settings.
  // No `home_channel`: a comment goes to the pull request the route names (deliver_extra.repo, pr_number).
  forge_comment: z.strictObject({
    enabled: z.boolean().optional(),
    timeout_seconds: base.timeout_seconds,
    command: text.default("gh"),
  }),
} as const;

export type PlatformName = keyof typeof PLATFORM_SCHEMAS;
export type PlatformConfig<N extends PlatformName> = z.infer<(typeof PLATFORM_SCHEMAS)[N]>;
export const PLATFORM_NAMES = Object.keys(PLATFORM_SCHEMAS) as PlatformName[];

/** Keys a platform needs once enabled, each with the hint shown when it is missing. */
export const REQUIRED_WHEN_ENABLED: Readonly<Record<PlatformName, readonly string[]>> = {
  telegram: ["token"],
  discord: ["token"],
  slack: ["token"],
  signal: ["number"],
  whatsapp: ["token", "phone_number_id"],
  matrix: ["token"],
  mattermost: ["token", "base_url"],
  dingtalk: ["client_id", "client_secret"],
  feishu: ["app_id", "app_secret"],
  wecom: ["corp_id", "corp_secret", "agent_id"],
  weixin: ["app_id", "app_secret"],
  bluebubbles: ["password", "base_url"],
  qqbot: ["app_id", "client_secret"],
  sms: ["account_sid", "auth_token", "from"],
  email: ["host", "from"],
  home_automation: ["token"],
  forge_comment: [],
};

/** Other names accepted as config keys (and as `deliver` values): spec names and real platform names. */
export const PLATFORM_ALIASES: Readonly<Record<string, PlatformName>> = {
  chat_1: "telegram",
  chat_2: "discord",
  chat_3: "slack",
  chat_4: "signal",
  chat_5: "whatsapp",
  chat_6: "matrix",
  chat_7: "mattermost",
  chat_8: "dingtalk",
  chat_9: "feishu",
  chat_10: "wecom",
  chat_11: "weixin",
  chat_12: "bluebubbles",
  chat_13: "qqbot",
  github_comment: "forge_comment",
  homeassistant: "home_automation",
};

const keyShape = Object.fromEntries(
  [...PLATFORM_NAMES, ...Object.keys(PLATFORM_ALIASES)].map((key) => {
    const name = (PLATFORM_ALIASES[key] ?? key) as PlatformName;
    return [key, PLATFORM_SCHEMAS[name].optional()];
  }),
) as { [N in PlatformName]: z.ZodOptional<(typeof PLATFORM_SCHEMAS)[N]> };

type Platforms = { [N in PlatformName]?: PlatformConfig<N> };

/**
 * Every platform may be written under its canonical name or an alias (`chat_1`, `github_comment`, ...);
 * errors name the key as written. The parsed value has canonical keys only.
 */
const platformsObject = z
  .looseObject({ webhook: webhookSchema.optional(), ...keyShape })
  .superRefine(
    (platforms, ctx) => {
      const seenAs: Partial<Record<PlatformName, string>> = {};
      for (const [key, value] of Object.entries(platforms)) {
        if (key === "webhook") continue;
        const name = (PLATFORM_ALIASES[key] ?? key) as PlatformName;
        if (!PLATFORM_NAMES.includes(name)) {
          const known = ["webhook", ...PLATFORM_NAMES, ...Object.keys(PLATFORM_ALIASES)];
          // `webhooks:` or `Telegram:` is named with the platform meant, as an unknown key of any section is.
          const meant = nearMiss(key, known);
          // `platforms:` then `  port: 8644` beside `webhook:`: a setting of the adapter one level too far out.
          const setting = WEBHOOK_SETTINGS.includes(key)
            ? `unknown platform — ${key} is a setting of platforms.webhook: indent it under webhook: (platforms.webhook.${key})`
            : undefined;
          ctx.addIssue({
            code: "custom",
            path: [key],
            message:
              setting ??
              (meant === undefined
                ? `unknown platform — use one of ${known.join(", ")}`
                : `unknown platform — did you mean "${meant}"? (use one of ${known.join(", ")})`),
          });
          continue;
        }
        const earlier = seenAs[name];
        if (earlier !== undefined) {
          ctx.addIssue({
            code: "custom",
            path: [key],
            message: `names the same platform as "${earlier}" — keep one of them`,
          });
          continue;
        }
        seenAs[name] = key;
        const settings = value as Record<string, unknown> | undefined;
        if (settings?.enabled !== true) continue;
        for (const required of REQUIRED_WHEN_ENABLED[name]) {
          if (settings[required] === undefined) {
            ctx.addIssue({
              code: "custom",
              path: [key, required],
              message: `required when ${key} is enabled — set it (a \${VAR} from .env works), see docs/delivery-targets.md`,
            });
          }
        }
      }
    },
    // Also when a platform's own keys failed (`email.port: "587"`): the problems of the others (an enabled
    // sms without its from) are reported in the same run, not one fix later.
    { when: () => true },
  )
  .transform(({ webhook, ...rest }) => {
    const canonical: Platforms = {};
    for (const [key, value] of Object.entries(rest)) {
      if (value !== undefined) (canonical as Record<string, unknown>)[PLATFORM_ALIASES[key] ?? key] = value;
    }
    return { webhook, ...canonical };
  });

export const platformsSchema = z
  .preprocess((raw) => raw ?? {}, platformsObject)
  // Parsed once: a second parse of the parsed settings would lose where their keys were written (routeKey).
  .transform((p) => ({ ...p, webhook: p.webhook ?? webhookSchema.parse({}) }))
  .default({ webhook: webhookSchema.parse({}) });
