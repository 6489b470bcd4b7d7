import { existsSync, readFileSync } from "node:fs";
import { parse as parseEnv } from "dotenv";
import { parseDocument } from "yaml";
import { SvcError } from "../errors.js";
import { formatIssues } from "./format.js";
import { type InterpolationScope, interpolateDeep } from "./interpolate.js";
import { type SvcPaths, svcHome, svcPaths } from "./paths.js";
import { type Config, configSchema } from "./schema.js";

export interface LoadedConfig {
  readonly config: Config;
  readonly paths: SvcPaths;
  /** The default profile's secret scope (`.env` then the process environment). */
  readonly scope: InterpolationScope;
  /** False when no config.yaml exists and the embedded default is in use. */
  readonly fromFile: boolean;
}

/** With no config file the gateway still runs: webhook adapter on loopback, echo agent, log delivery. */
export const EMBEDDED_DEFAULT = {
  platforms: { webhook: { enabled: true, host: "127.0.0.1", port: 8644 } },
};

export function readEnvFile(path: string): Record<string, string> {
  if (!existsSync(path)) return {};
  return parseEnv(readFileSync(path));
}

export function secretScope(paths: SvcPaths, env: NodeJS.ProcessEnv = process.env): InterpolationScope {
  return { secrets: readEnvFile(paths.env), env };
}

function readYaml(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new SvcError("config_unreadable", `${file}: cannot be read (${(err as Error).message})`);
  }
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length > 0) {
    const first = doc.errors[0];
    const where = first?.linePos?.[0] ? ` line ${first.linePos[0].line}` : "";
    throw new SvcError(
      "config_invalid",
      `${file}:${where}: not valid YAML — ${first?.message.split("\n")[0]}`,
    );
  }
  return doc.toJS() ?? {};
}

function lookupVar(name: string, scope: InterpolationScope): string | undefined {
  const value = scope.env[name] ?? scope.secrets[name];
  return value === undefined || value === "" ? undefined : value;
}

/** WEBHOOK_ENABLED / WEBHOOK_PORT / WEBHOOK_SECRET (process environment, then `.env`) override the file. */
function applyWebhookEnv(raw: Record<string, unknown>, scope: InterpolationScope, file: string): void {
  raw.platforms ??= {};
  const platforms = raw.platforms as Record<string, unknown>;
  platforms.webhook ??= {};
  const webhook = platforms.webhook as Record<string, unknown>;
  const target = (webhook.extra && typeof webhook.extra === "object" ? webhook.extra : webhook) as Record<
    string,
    unknown
  >;
  const enabled = lookupVar("WEBHOOK_ENABLED", scope);
  if (enabled !== undefined) {
    const on = /^(1|true|yes|on)$/i.test(enabled);
    const off = /^(0|false|no|off)$/i.test(enabled);
    if (!on && !off) {
      throw new SvcError(
        "config_invalid",
        `${file}: WEBHOOK_ENABLED: expected true or false, got "${enabled}"`,
      );
    }
    target.enabled = on;
  }
  const port = lookupVar("WEBHOOK_PORT", scope);
  if (port !== undefined) {
    const n = Number(port);
    if (!Number.isInteger(n) || n < 0 || n > 65535) {
      throw new SvcError("config_invalid", `${file}: WEBHOOK_PORT: expected a port number, got "${port}"`);
    }
    target.port = n;
  }
  const secret = lookupVar("WEBHOOK_SECRET", scope);
  if (secret !== undefined) target.secret = secret;
}

/** Reads config.yaml (or the embedded default), `.env` and the environment, and validates the result. */
export function loadConfig(options: { home?: string; env?: NodeJS.ProcessEnv } = {}): LoadedConfig {
  const env = options.env ?? process.env;
  const paths = svcPaths(options.home ?? svcHome(env));
  const scope = secretScope(paths, env);
  const fromFile = existsSync(paths.config);
  const raw = fromFile ? readYaml(paths.config) : structuredClone(EMBEDDED_DEFAULT);
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new SvcError("config_invalid", `${paths.config}: the top level must be a mapping of sections`);
  }
  const record = raw as Record<string, unknown>;
  // MCP entries stay raw: they are rendered at connect time (a `${VAR}` set later must be picked up).
  const { mcp_servers, ...rest } = record;
  const rendered = interpolateDeep(rest, scope);
  applyWebhookEnv(rendered, scope, paths.config);
  const parsed = configSchema.safeParse({ ...rendered, mcp_servers }, { reportInput: true });
  if (!parsed.success) {
    throw new SvcError("config_invalid", formatIssues(paths.config, parsed.error.issues));
  }
  return { config: parsed.data, paths, scope, fromFile };
}
