import { mergeScopes, type StoredMetadata } from "../../io/oauth/tokenStore.js";
import type { OAuthJob } from "./context.js";

/**
 * The scope a login asks for: `oauth.scope`; else the scope the resource's 401 challenge names; else
 * every scope its metadata lists (the MCP authorization spec's scope selection); else none. A scope the
 * resource required with 403 `insufficient_scope` (step-up) is added. The same scope is registered with a
 * dynamic client registration (some servers let a client ask only for the scopes it registered).
 */
export function scopeFor(job: OAuthJob, meta: StoredMetadata): string | undefined {
  const base =
    job.entry.oauth?.scope ?? meta.challengedScope ?? meta.resourceMetadata?.scopes_supported?.join(" ");
  return mergeScopes(base, meta.requiredScope);
}

/**
 * Whether a registration admits `scope`: one that recorded no `scope` admits anything (the server applies
 * its own rule); one that did must hold every scope asked for, or the server refuses the request
 * (`invalid_scope`) and the login registers again instead.
 */
export function registeredScopeCovers(registered: string | undefined, scope: string | undefined): boolean {
  if (registered === undefined || scope === undefined) return true;
  const held = new Set(registered.split(/\s+/));
  return scope.split(/\s+/).every((s) => s === "" || held.has(s));
}

/** Where the scope a login asks for comes from, in the words of the key or document that set it. */
function scopeSource(job: OAuthJob, meta: StoredMetadata): string {
  const base =
    job.entry.oauth?.scope !== undefined
      ? `mcp_servers.${job.serverName}.oauth.scope`
      : meta.challengedScope !== undefined
        ? "the scope of the server's 401 challenge"
        : meta.resourceMetadata?.scopes_supported !== undefined
          ? "the scopes_supported of the server's protected resource metadata"
          : undefined;
  const stepUp = meta.requiredScope !== undefined ? "a 403 insufficient_scope of the server" : undefined;
  return [base, stepUp].filter((s) => s !== undefined).join(", and ");
}

/**
 * What to do when the authorization server answers `invalid_scope`: logging in again would ask for the
 * same scope, so the advice names that scope, where it came from and the key that replaces it.
 */
export function invalidScopeAdvice(job: OAuthJob, meta: StoredMetadata, command: string): string {
  const scope = scopeFor(job, meta);
  const source = scopeSource(job, meta);
  const asked = scope === undefined ? "svc asked for no scope" : `svc asked for scope "${scope}"`;
  return `${asked}${source ? ` (${source})` : ""}: set mcp_servers.${job.serverName}.oauth.scope to scopes the authorization server allows this client, then run \`${command}\``;
}
