import { userAgentProblem } from "../../config/userAgent.js";
import { SvcError } from "../../errors.js";

/**
 * The `oauth` mapping of an `auth: oauth` server entry, read defensively:
 * the config schema validates it, this only narrows the shape the OAuth code needs.
 */
export interface OAuthSettings {
  readonly flow?: "browser" | "device";
  /** Seconds bounding the device approval wait (default 300). */
  readonly timeout?: number;
  readonly client_id?: string;
  readonly client_secret?: string;
  readonly token_endpoint_auth_method?: string;
  readonly client_name?: string;
  readonly scope?: string;
  readonly redirect_uri?: string;
  readonly redirect_port?: number;
  readonly client_metadata_url?: string;
  readonly cimd?: boolean;
  /** `false`: no RFC 8707 `resource` parameter is sent (authorization servers that refuse it). */
  readonly resource_indicator?: boolean;
  /** `false`: no `prompt=consent` with an `offline_access` scope (tenants where only admins consent). */
  readonly consent_prompt?: boolean;
  readonly user_agent?: string | null;
}

export interface OAuthServerEntry {
  readonly url: string;
  readonly auth?: string;
  readonly oauth?: OAuthSettings;
  /** The server's TLS keys: OAuth requests honour them like the MCP transport does. */
  readonly ssl_verify?: boolean | string;
  readonly client_cert?: string | [string, string] | [string, string, string];
  readonly client_key?: string;
}

export const DEFAULT_DEVICE_TIMEOUT_S = 300;
export const BROWSER_LOGIN_TIMEOUT_MS = 5 * 60_000;

function str(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** Narrows a raw server entry; unknown or mistyped keys are dropped (the schema reports them). */
export function oauthEntryOf(serverName: string, raw: unknown): OAuthServerEntry {
  const entry = (raw ?? {}) as Record<string, unknown>;
  const url = str(entry.url);
  if (url === undefined) {
    throw new Error(`config.yaml: mcp_servers.${serverName}.url: missing — OAuth needs an HTTP server URL`);
  }
  const o = (entry.oauth ?? {}) as Record<string, unknown>;
  const settings: Record<string, unknown> = {};
  for (const key of [
    "client_id",
    "client_secret",
    "token_endpoint_auth_method",
    "client_name",
    "scope",
    "redirect_uri",
    "client_metadata_url",
    "user_agent",
  ]) {
    const v = str(o[key]);
    if (v !== undefined) settings[key] = v;
  }
  const userAgent = settings.user_agent as string | undefined;
  const agentProblem = userAgent === undefined ? undefined : userAgentProblem(userAgent);
  if (agentProblem !== undefined)
    throw new SvcError("oauth", `mcp_servers.${serverName}.oauth.user_agent: ${agentProblem}`);
  if (Array.isArray(o.scope) && o.scope.every((x) => typeof x === "string"))
    settings.scope = o.scope.join(" ");
  // A scope of spaces alone names no scope, as an empty one does: the challenge's or scopes_supported is
  // asked for, rather than no scope at all.
  if (typeof settings.scope === "string" && settings.scope.trim() === "") delete settings.scope;
  if (o.flow === "device" || o.flow === "browser") settings.flow = o.flow;
  if (typeof o.timeout === "number" && o.timeout > 0) settings.timeout = o.timeout;
  const port = typeof o.redirect_port === "string" ? Number(o.redirect_port) : o.redirect_port;
  if (typeof port === "number" && Number.isInteger(port) && port >= 0 && port < 65536)
    settings.redirect_port = port;
  if (typeof o.cimd === "boolean") settings.cimd = o.cimd;
  else if (o.cimd === "false") settings.cimd = false;
  if (typeof o.resource_indicator === "boolean") settings.resource_indicator = o.resource_indicator;
  else if (o.resource_indicator === "false") settings.resource_indicator = false;
  if (typeof o.consent_prompt === "boolean") settings.consent_prompt = o.consent_prompt;
  else if (o.consent_prompt === "false") settings.consent_prompt = false;
  const cert = entry.client_cert;
  const certOk =
    typeof cert === "string" ||
    (Array.isArray(cert) && cert.length >= 2 && cert.length <= 3 && cert.every((c) => typeof c === "string"));
  return {
    url,
    ...(str(entry.auth) ? { auth: str(entry.auth) as string } : {}),
    oauth: settings as OAuthSettings,
    ...(typeof entry.ssl_verify === "boolean" || str(entry.ssl_verify) !== undefined
      ? { ssl_verify: entry.ssl_verify as boolean | string }
      : {}),
    ...(certOk ? { client_cert: cert as NonNullable<OAuthServerEntry["client_cert"]> } : {}),
    ...(str(entry.client_key) !== undefined ? { client_key: str(entry.client_key) as string } : {}),
  };
}
