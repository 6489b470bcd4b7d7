import { CREDENTIAL_NAME, holdsNoCredential } from "../../config/credentialHeader.js";
import { HEADER_CONTROL, HEADER_NOT_LATIN1 } from "../../config/headerValue.js";
import {
  addVariablesAdvice,
  expandHome,
  type InterpolationScope,
  interpolate,
  interpolateDeep,
} from "../../config/interpolate.js";
import { httpUrlProblem, type McpServerEntry, sentHeaders } from "../../config/sections/mcp.js";
import { percentDecoded } from "../../config/urlCredentials.js";
import { SvcError } from "../../errors.js";
import { fingerprint } from "./entryFingerprint.js";

/**
 * Renders `${VAR}` in a server entry at connect time. An unset variable keeps its literal text,
 * except in a remote server's `url` and `headers`: there the connect fails closed, naming the variable,
 * so a half-rendered URL or credential never leaves the machine.
 */
export function renderEntry(name: string, entry: McpServerEntry, scope: InterpolationScope): McpServerEntry {
  const { url, headers: written, ...rest } = entry;
  // Headers the HTTP client sets itself are not sent (unusedMcpKeys warns): never rendered or checked.
  const headers = url === undefined ? written : sentHeaders(written);
  const rendered = interpolateDeep(rest, scope);
  const out: McpServerEntry = { ...rendered, headers: {} };
  // Every unset variable of url and headers at once: fixing them one connect at a time is tedious.
  // Only a remote server's: a stdio entry's headers are not used, and keep unset names literally.
  const unset =
    url === undefined
      ? []
      : [
          { key: "url", names: interpolate(url, scope).unresolved },
          ...Object.entries(headers).map(([key, value]) => ({
            key: `headers.${key}`,
            names: interpolate(value, scope).unresolved,
          })),
        ].filter((u) => u.names.length > 0);
  failOnUnset(name, unset);
  if (url !== undefined) {
    const r = interpolate(url, scope);
    const problem = httpUrlProblem(r.value, url);
    if (problem !== undefined)
      throw new SvcError(
        "mcp_connect",
        `mcp_servers.${name}.url: ${problem}${emptyVariablesNote(emptyVariables(url, scope))}`,
      );
    out.url = r.value;
  }
  const userinfo = out.url === undefined ? undefined : splitUserinfo(out.url);
  if (userinfo !== undefined) out.url = userinfo.url;
  for (const [key, value] of Object.entries(headers)) {
    const r = interpolate(value, scope);
    // fetch would refuse it with an error that quotes the value (usually a secret from .env), and undici
    // any other control character but tab with only "invalid x-key header", naming neither server nor fix.
    if (HEADER_CONTROL.test(r.value)) {
      throw new SvcError(
        "mcp_connect",
        `mcp_servers.${name}.headers.${key}: the value${r.value === value ? "" : " rendered from ${...}"} contains ${/[\0\r\n]/.test(r.value) ? "a line break or NUL character" : "a control character (such as an escape or DEL)"}, which an HTTP header cannot carry — check it (not shown here) in config.yaml or the profile's .env`,
      );
    }
    // fetch takes header values as bytes (Latin-1) and refuses others with "Cannot convert argument to a
    // ByteString because the character at index 0 has a value of 8364", naming neither server nor key.
    if (HEADER_NOT_LATIN1.test(r.value)) {
      throw new SvcError(
        "mcp_connect",
        `mcp_servers.${name}.headers.${key}: the value${r.value === value ? "" : " rendered from ${...}"} contains a character an HTTP header cannot carry (one outside Latin-1, such as € or an emoji) — write it in ASCII, percent-encoded if the server decodes it (check it, not shown here, in config.yaml or the profile's .env)`,
      );
    }
    out.headers[key] = r.value;
  }
  // fetch refuses a URL with user:password@ and quotes it whole in its error; httpx and curl send them
  // as Basic credentials, so do that (unless an Authorization header is configured).
  if (userinfo !== undefined && !Object.keys(out.headers).some((k) => k.toLowerCase() === "authorization"))
    out.headers.Authorization = userinfo.authorization;
  if (url === undefined) nulFree(name, out);
  if (out.command !== undefined) out.command = expandHome(out.command);
  out.args = out.args.map(expandHome);
  if (typeof out.ssl_verify === "string") out.ssl_verify = expandHome(out.ssl_verify);
  if (typeof out.client_cert === "string") out.client_cert = expandHome(out.client_cert);
  else if (Array.isArray(out.client_cert)) {
    const [cert, key, password] = out.client_cert;
    out.client_cert =
      password === undefined
        ? [expandHome(cert), expandHome(key)]
        : [expandHome(cert), expandHome(key), password];
  }
  if (out.client_key !== undefined) out.client_key = expandHome(out.client_key);
  return out;
}

/**
 * A stdio server's `command`, `args` and `env` values go to the OS as C strings: spawn refuses a NUL in
 * one (from a `${VAR}` of `.env`, or YAML's "\0") with an error that quotes the value, usually a secret.
 */
function nulFree(name: string, entry: McpServerEntry): void {
  const values: Array<readonly [string, string]> = [
    ["command", entry.command ?? ""],
    ...entry.args.map((value, i) => [`args[${i}]`, value] as const),
    ...Object.entries(entry.env).map(([key, value]) => [`env.${key}`, value] as const),
  ];
  const bad = values.find(([, value]) => value.includes("\0"));
  if (bad !== undefined)
    throw new SvcError(
      "mcp_connect",
      `mcp_servers.${name}.${bad[0]}: the value contains a NUL character, which a process's arguments and environment cannot carry — check it (not shown here) in config.yaml or the profile's .env`,
    );
}

/**
 * What a url server's requests carry as credentials: the `Authorization` header (from `headers`, or the url's
 * user:password@) and any other credential-named header (`X-Api-Key`). None; credentials, with the headers
 * of the entry that carry them and whether the url's user:password@ does; or a header with no credential in
 * it (`Bearer ${TOKEN}` with `TOKEN=` in `.env`: set, so sent, but empty), with the variables of the written
 * value that render empty.
 */
export type SentAuthorization =
  | { readonly kind: "none" }
  | { readonly kind: "sent"; readonly keys: readonly string[]; readonly fromUrl: boolean }
  | { readonly kind: "empty"; readonly key: string; readonly variables: readonly string[] };

export const isAuthorizationHeader = (key: string): boolean => key.toLowerCase() === "authorization";

export function sentAuthorization(
  entry: McpServerEntry,
  rendered: McpServerEntry,
  scope: InterpolationScope,
): SentAuthorization {
  const keys = Object.keys(rendered.headers).filter((k) => CREDENTIAL_NAME.test(k));
  if (keys.length === 0) return { kind: "none" };
  // An empty one explains the refusal better than one that carries a value; Authorization is named first.
  const empty = [
    ...keys.filter(isAuthorizationHeader),
    ...keys.filter((k) => !isAuthorizationHeader(k)),
  ].find((k) => holdsNoCredential(rendered.headers[k] ?? ""));
  // An Authorization made from the url's user:password@ is in no `headers` of the entry.
  const fromUrl = (k: string) => !Object.hasOwn(entry.headers, k);
  if (empty === undefined)
    return { kind: "sent", keys: keys.filter((k) => !fromUrl(k)), fromUrl: keys.some(fromUrl) };
  return { kind: "empty", key: empty, variables: emptyVariables(entry.headers[empty] ?? "", scope) };
}

/** The `${NAME}`s of a written value that are set to an empty value (`TOKEN=` left blank in `.env`). */
export function emptyVariables(written: string, scope: InterpolationScope): string[] {
  return [...written.matchAll(/\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}/g)]
    .map((m) => m[1] as string)
    .filter((n, i, all) => all.indexOf(n) === i && interpolate(`\${${n}}`, scope).value === "");
}

/** Said after a value a `${NAME}` set to an empty value left wrong, since the file shows the name only. */
export function emptyVariablesNote(variables: readonly string[]): string {
  if (variables.length === 0) return "";
  return ` — ${variables.map((n) => `\${${n}}`).join(", ")} ${variables.length === 1 ? "is" : "are"} set to an empty value (a line ${variables[0]}= in the profile's .env, or an empty variable of the environment)`;
}

/**
 * `auth: oauth` sends the access token of the server's login as the `Authorization` header. A configured
 * one (in `headers`, or from the url's user:password@) would replace it, or sit beside it when spelled
 * in another case, so every request would be refused and sent again with the token: it is not sent.
 */
export function withoutConfiguredAuthorization(entry: McpServerEntry): McpServerEntry {
  if (entry.auth !== "oauth" || entry.url === undefined) return entry;
  const kept = Object.entries(entry.headers).filter(([key]) => key.toLowerCase() !== "authorization");
  return kept.length === Object.keys(entry.headers).length
    ? entry
    : { ...entry, headers: Object.fromEntries(kept) };
}

function failOnUnset(name: string, unset: ReadonlyArray<{ key: string; names: readonly string[] }>): void {
  const all = [...new Set(unset.flatMap((u) => u.names))];
  const first = unset[0];
  if (first === undefined) return;
  if (all.length === 1) {
    throw new SvcError(
      "mcp_connect",
      `mcp_servers.${name}.${first.key}: \${${all[0]}} is not set — ${addVariablesAdvice(all, "the profile's .env or the environment")} (the next connect picks it up)`,
    );
  }
  const where = unset.map((u) => `${u.names.map((n) => `\${${n}}`).join(", ")} in ${u.key}`).join("; ");
  throw new SvcError(
    "mcp_connect",
    `mcp_servers.${name}: ${where} are not set — ${addVariablesAdvice(all, "the profile's .env or the environment")} (the next connect picks them up)`,
  );
}

/** The `tools` policy with `${VAR}` rendered in its names and globs (strings anywhere in an entry). */
export function renderToolsPolicy(entry: McpServerEntry, scope: InterpolationScope): McpServerEntry["tools"] {
  return interpolateDeep(entry.tools, scope);
}

/** `https://user:pass@host/p` → the url without them and their `Basic` header; undefined without userinfo. */
function splitUserinfo(url: string): { url: string; authorization: string } | undefined {
  const parsed = new URL(url);
  if (parsed.username === "" && parsed.password === "") return undefined;
  const credentials = `${percentDecoded(parsed.username)}:${percentDecoded(parsed.password)}`;
  parsed.username = "";
  parsed.password = "";
  return { url: parsed.href, authorization: `Basic ${Buffer.from(credentials, "utf8").toString("base64")}` };
}

/**
 * The entry with every `${VAR}` replaced by what `.env` and the environment give now, hashed (in memory
 * only): a reload compares it with the one a live connection was made with, so a token rotated in `.env`
 * reconnects the server although config.yaml did not change.
 */
export function renderedFingerprint(name: string, entry: McpServerEntry, scope: InterpolationScope): string {
  return fingerprint(name, interpolateDeep(entry, scope));
}
