import type { OAuthJob } from "./context.js";

/**
 * The RFC 8707 `resource` parameter a login or refresh sends: the protected resource's identifier, or
 * none when `oauth.resource_indicator: false` (Microsoft Entra ID's v2.0 endpoints refuse the parameter
 * and take the resource from the scope, `api://<app>/.default`). The saved tokens record the resource
 * either way, so they are handed to no other server.
 */
export function sentResource(job: OAuthJob, resource: string | undefined): string | undefined {
  return job.entry.oauth?.resource_indicator === false ? undefined : resource;
}

/**
 * Whether an authorization server refused the `resource` parameter itself: RFC 8707's `invalid_target`,
 * or Entra ID's AADSTS9010010 (resource and scope disagree) and AADSTS901002 (parameter not supported).
 */
export function resourceRefused(error: string | undefined, text: string): boolean {
  return error === "invalid_target" || /\bAADSTS(?:9010010|901002)\b/.test(text);
}

/** What to do about a refused `resource` parameter: leave it out. */
export function resourceAdvice(job: OAuthJob, command: string): string {
  return `the server refused the resource parameter (RFC 8707) svc sends; set mcp_servers.${job.serverName}.oauth.resource_indicator: false to leave it out, then run \`${command}\``;
}
