import { executableProblem, scriptInterpreterProblem } from "../io/executable.js";
import { describe } from "./describe.js";
import { givenBy } from "./givenValues.js";
import type { Config } from "./schema.js";
import { DEFAULT_BASE_URLS, modelBaseUrl } from "./sections/agent.js";
import { CLIENT_SET_HEADERS, type McpServerEntry } from "./sections/mcp.js";
import { TOOLSETS_WITHOUT_TOOLS } from "./sections/tools.js";
import { routeKey, settingKey, shadowedRoutes, shadowedSettings } from "./sections/webhook.js";
import { tokenPrefixWarnings } from "./tokenPrefixes.js";
import { unsetPlatformVariableWarnings, unsetRouteVariableWarnings } from "./unsetPlatformVariables.js";
import { textWithoutUrlCredentials } from "./urlCredentials.js";
import { uwsHeaderNameWarnings } from "./uwsHeaderNames.js";

/** The optional `agent` keys each provider reads (the others have defaults and are not checked). */
const AGENT_KEYS_USED: Record<string, readonly string[]> = {
  echo: [],
  command: ["command"],
  openai: ["model", "base_url", "api_key", "system_prompt"],
  anthropic: ["model", "base_url", "api_key", "system_prompt"],
};
const AGENT_OPTIONAL_KEYS = ["command", "model", "base_url", "api_key", "system_prompt"] as const;

/**
 * `agent.command` naming a program that is not there (`my-agnet`, a path to a file not installed yet), or a
 * script whose `#!` interpreter is not (another machine's path, a Windows line ending): the gateway starts,
 * and every run fails with `spawn ... ENOENT`. Named at start, on reload and by `svc config
 * check`; a `${VAR}` in it that nothing sets is named by unsetPlatformVariables.ts instead.
 */
function agentCommandWarning(config: Config, file: string): string | undefined {
  const program = config.agent.provider === "command" ? config.agent.command?.[0] : undefined;
  if (program === undefined || program.includes("${")) return undefined;
  // One a `${VAR}` gave is named as the file writes it.
  const given = givenBy(config.agent.command, 0);
  const problem = executableProblem(program, undefined, given);
  if (problem === undefined) {
    const script = scriptInterpreterProblem(program, process.env.PATH ?? "", given !== undefined);
    if (script === undefined) return undefined;
    const named = given === undefined ? "" : `${describe(given)}: `;
    return `[agent] ${file}: agent.command: every agent run fails to start: ${named}${script}`;
  }
  return `[agent] ${file}: agent.command: ${problem} — every agent run fails to start until it can be: write the absolute path of an executable file, or the name of one on the gateway's PATH`;
}

/**
 * Settings written out that the rest of the configuration leaves unused: `agent.command` under the echo
 * provider (a forgotten `provider: command`), `state.redis_url` with the local backend,
 * `platforms.webhook.workers` with `http_server: node`, a filter on a header uWS never lets through, a route's
 * `toolsets` naming a toolset a model run gets no tool for; and a delivery platform's `${VAR}` that nothing
 * sets or token pasted with the prefix svc adds itself. The gateway runs without them, so it says so at start rather than dropping them without a word.
 */
export function unusedSettingWarnings(config: Config, file: string): string[] {
  const warnings: string[] = [];
  const { agent, state } = config;
  const used = AGENT_KEYS_USED[agent.provider] ?? [];
  const unused = AGENT_OPTIONAL_KEYS.filter((key) => agent[key] !== undefined && !used.includes(key));
  if (unused.length > 0) {
    const keys = unused.map((key) => `agent.${key}`).join(", ");
    const fix = unused.includes("command")
      ? "set agent.provider: command to run agent.command"
      : "set agent.provider: openai or anthropic to run a model";
    warnings.push(
      `[agent] ${file}: agent.provider is ${agent.provider}, which does not use ${keys} — ${fix}, or remove ${unused.length === 1 ? "it" : "them"}`,
    );
  }
  const unstartable = agentCommandWarning(config, file);
  if (unstartable !== undefined) warnings.push(unstartable);
  const keyless = missingKeyWarning(config, file);
  if (keyless !== undefined) warnings.push(keyless);
  const unversioned = unversionedBaseUrlWarning(config, file) ?? endpointBaseUrlWarning(config, file);
  if (unversioned !== undefined) warnings.push(unversioned);
  if (agent.provider === "openai" || agent.provider === "anthropic")
    warnings.push(...toollessToolsets(config, agent.provider, file));
  warnings.push(...searchWithoutBackend(config, file));
  warnings.push(...disabledServerRouteToolsets(config, file));
  const redisKeys = (["redis_url", "redis_key_prefix"] as const).filter((key) => state[key] !== undefined);
  if (state.backend !== "redis" && redisKeys.length > 0)
    warnings.push(
      `[state] ${file}: ${redisKeys.map((key) => `state.${key}`).join(" and ")} ${redisKeys.length === 1 ? "is" : "are"} set, but state.backend is ${state.backend}: Redis is not used — set state.backend: redis to share state between gateways, or remove ${redisKeys.length === 1 ? "it" : "them"}`,
    );
  // Ingress threads are uWS's: node:http serves every request on the main thread.
  const webhook = config.platforms.webhook;
  if (webhook.http_server === "node" && webhook.workers > 0)
    warnings.push(
      `[webhook] ${file}: ${settingKey(webhook, "workers")} is ${webhook.workers}, but ${settingKey(webhook, "http_server")} is node, which has no ingress threads: it is not used — set http_server: uws to run the sockets on ${webhook.workers} thread(s), or remove workers`,
    );
  if (webhook.http_server === "uws")
    for (const [name, route] of Object.entries(webhook.routes))
      for (const problem of uwsHeaderNameWarnings(route.filters))
        warnings.push(`[webhook] ${file}: ${routeKey(name, route)}.${problem}`);
  const search = config.tools?.web_search;
  if (search?.backend === "searxng" && search.api_key !== undefined)
    warnings.push(
      `[agent] ${file}: tools.web_search.api_key is set, but the searxng backend takes no key: it is never sent — remove it (brave and tavily use it)`,
    );
  for (const [name, entry] of Object.entries(config.mcp_servers))
    warnings.push(...unusedMcpKeys(entry).map((problem) => `[mcp] ${file}: mcp_servers.${name}: ${problem}`));
  warnings.push(...unsetPlatformVariableWarnings(config, file));
  warnings.push(...tokenPrefixWarnings(config, file));
  warnings.push(...unsetRouteVariableWarnings(config, file));
  // Never the values: a secret may be among them.
  for (const key of shadowedSettings(config.platforms.webhook))
    warnings.push(
      `[webhook] ${file}: platforms.webhook.${key} is also written under platforms.webhook.extra.${key}, which wins: this one is not used — remove one of them`,
    );
  for (const name of shadowedRoutes(config.platforms.webhook))
    warnings.push(
      `[webhook] ${file}: platforms.webhook.routes.${name} is also written under platforms.webhook.extra.routes.${name}, which wins: this one is not used — remove one of them, or rename one to serve both`,
    );
  return warnings;
}

/** The variable a provider's key is usually kept in, for the hint. */
const KEY_VARIABLE = { openai: "OPENAI_API_KEY", anthropic: "ANTHROPIC_API_KEY" } as const;

/**
 * A model provider's own public endpoint (no `base_url`, or one naming that API's host, as the examples
 * write `https://api.openai.com/v1`) refuses every request without a key, so each run would fail with a
 * 401; a `base_url` of another server may need none (a local Ollama or vLLM).
 */
function missingKeyWarning({ agent }: Config, file: string): string | undefined {
  if (agent.provider !== "openai" && agent.provider !== "anthropic") return undefined;
  if (agent.api_key !== undefined && agent.api_key !== "") return undefined;
  const base = modelBaseUrl(agent.provider, agent.base_url);
  const ownHost = new URL(DEFAULT_BASE_URLS[agent.provider]).hostname;
  if (!URL.canParse(base) || new URL(base).hostname.toLowerCase() !== ownHost) return undefined;
  return `[agent] ${file}: agent.api_key is not set, and ${base} refuses requests without a key: every run would fail — set agent.api_key: \${${KEY_VARIABLE[agent.provider]}} (with the key in .env), or set agent.base_url to an endpoint that needs none`;
}

/**
 * `base_url` naming a provider's own API without its `/v1` (`https://api.openai.com`, `http://api.anthropic.com`):
 * svc appends only `/messages` or `/chat/completions`, and the API answers 404 to every run.
 * (`https://api.anthropic.com` itself, as the `ANTHROPIC_BASE_URL` of Anthropic's SDKs is written, is taken
 * as `https://api.anthropic.com/v1`: `modelBaseUrl`.)
 */
function unversionedBaseUrlWarning({ agent }: Config, file: string): string | undefined {
  if (agent.provider !== "openai" && agent.provider !== "anthropic") return undefined;
  if (agent.base_url === undefined || !URL.canParse(agent.base_url)) return undefined;
  const base = modelBaseUrl(agent.provider, agent.base_url);
  const url = new URL(base);
  const own = new URL(DEFAULT_BASE_URLS[agent.provider]);
  if (url.hostname.toLowerCase() !== own.hostname || /^\/v1(\/|$)/.test(url.pathname)) return undefined;
  const path = agent.provider === "anthropic" ? "/messages" : "/chat/completions";
  // One a `${VAR}` gave is named as the file writes it, and not written back.
  const given = givenBy(agent, "base_url");
  const shown = given === undefined ? agent.base_url : describe(given);
  const endpoint = given === undefined ? `${base}${path}` : `its ${path}`;
  return `[agent] ${file}: agent.base_url ${shown} has no /v1: runs would post to ${endpoint}, which the API answers 404 — write ${DEFAULT_BASE_URLS[agent.provider]}, or leave base_url out`;
}

/**
 * `base_url` written as the whole endpoint (`http://127.0.0.1:1234/v1/chat/completions`, as LM Studio and
 * the providers' request examples show it): svc appends `/chat/completions` or `/messages` to it, so every
 * run would post to `.../chat/completions/chat/completions` and get a 404.
 */
function endpointBaseUrlWarning({ agent }: Config, file: string): string | undefined {
  if (agent.provider !== "openai" && agent.provider !== "anthropic") return undefined;
  if (agent.base_url === undefined || !URL.canParse(agent.base_url)) return undefined;
  const path = agent.provider === "anthropic" ? "/messages" : "/chat/completions";
  const base = agent.base_url.replace(/\/+$/, "");
  const url = new URL(base);
  if (url.search !== "" || url.hash !== "" || !url.pathname.toLowerCase().endsWith(path)) return undefined;
  // One a `${VAR}` gave is named as the file writes it, and not written back.
  const given = givenBy(agent, "base_url");
  if (given !== undefined)
    return `[agent] ${file}: agent.base_url ${describe(given)} ends in ${path}, which svc appends itself: runs would post to …${path}${path}, which answers 404 — write the base without ${path}`;
  return `[agent] ${file}: agent.base_url ${agent.base_url} ends in ${path}, which svc appends itself: runs would post to ${base}${path}, which answers 404 — write ${base.slice(0, -path.length)}`;
}

/**
 * A command agent is still handed `web_search` in SVC_TOOLSETS (the route's list, which it may honour with a
 * search of its own) while its SVC_MCP_URL offers none: said beside the lines below, so the list does not
 * read as the offer.
 */
function stillListed(config: Config): string {
  return config.agent.provider === "command" ? " (the command agent still sees it in SVC_TOOLSETS)" : "";
}

/** Model runs and a command agent's (at SVC_MCP_URL) are offered the built-in tools; an echo run calls none. */
function offersTools(config: Config): boolean {
  return config.agent.provider !== "echo";
}

/**
 * The routes whose runs get the default webhook toolset (no `toolsets`, or one naming `svc-webhook`)
 * while `tools.web_search` names no backend: said once at start (INFO), since that default lists
 * `web_search`, which such runs are not offered. Undefined when there are none.
 */
export function defaultToolsetWithoutSearch(config: Config, file: string): string | undefined {
  if (!offersTools(config)) return undefined;
  if (config.tools.web_search !== undefined) return undefined;
  const routes = Object.entries(config.platforms.webhook.routes)
    .filter(
      ([, route]) =>
        route.deliver_only !== true &&
        route.cron_job === undefined &&
        (route.toolsets === undefined || route.toolsets.includes("svc-webhook")),
    )
    .map(([name]) => name);
  if (routes.length === 0) return undefined;
  return `[agent] ${file}: runs of ${routes.join(", ")} get the default webhook toolset without web_search${stillListed(config)}: tools.web_search names no search backend — set tools.web_search (backend: searxng, brave or tavily) to offer it`;
}

/**
 * A route's toolsets a model run is offered nothing for: `code_execution`, `browser` and `memory` (svc
 * has no tool for them; a command agent sees them in SVC_TOOLSETS, to honour with tools of its own). The
 * route would run without what its author listed.
 */
function toollessToolsets(config: Config, provider: string, file: string): string[] {
  const warnings: string[] = [];
  for (const [name, route] of Object.entries(config.platforms.webhook.routes)) {
    const at = `[agent] ${file}: ${routeKey(name, route)}.toolsets`;
    const toolsets = route.toolsets ?? [];
    const toolless = toolsets.filter((t) => TOOLSETS_WITHOUT_TOOLS.includes(t));
    if (toolless.length > 0) {
      const [them, it] = toolless.length === 1 ? ["it", "has"] : ["them", "have"];
      warnings.push(
        `${at}: ${toolless.map((t) => `"${t}"`).join(", ")} ${it} no built-in tool in svc, so ${provider} runs of the route are offered nothing for ${them} (a command agent sees ${them} in SVC_TOOLSETS) — list terminal, file or web instead, or remove ${them}`,
      );
    }
  }
  return warnings;
}

/**
 * A route's toolsets naming `web_search` while `tools.web_search` names no backend: its runs are offered no
 * `web_search`, a model run's nor a command agent's at SVC_MCP_URL. (`web` is not named: its `web_extract`
 * alone is a use of it.)
 */
function searchWithoutBackend(config: Config, file: string): string[] {
  if (!offersTools(config) || config.tools.web_search !== undefined) return [];
  return Object.entries(config.platforms.webhook.routes)
    .filter(([, route]) => route.toolsets?.includes("web_search") === true)
    .map(
      ([name, route]) =>
        `[agent] ${file}: ${routeKey(name, route)}.toolsets: "web_search" needs a search backend, and tools.web_search names none, so runs of the route are offered no web_search${stillListed(config)} — set tools.web_search (backend: searxng, brave or tavily), or remove it`,
    );
}

/**
 * The names of `toolsets` that are MCP servers with `enabled: false`, each said as a route's (or a
 * subscription's) warning: such a server registers no tool, so runs of the route are offered none of it (and,
 * a server being named, no other server's either unless the list names one). For a model provider and a
 * command agent, whose runs reach the same tools at `SVC_MCP_URL`.
 */
export function disabledServerToolsets(toolsets: readonly string[] | undefined, config: Config): string[] {
  if (config.agent.provider === "echo") return [];
  return (toolsets ?? [])
    .filter((name) => Object.hasOwn(config.mcp_servers, name) && config.mcp_servers[name]?.enabled === false)
    .map(
      (name) =>
        `"${name}" names mcp_servers.${name}, which has enabled: false, so runs of the route are offered none of its tools — set mcp_servers.${name}.enabled: true, or remove it from the list`,
    );
}

/** `disabledServerToolsets` for config.yaml's routes that start runs. */
function disabledServerRouteToolsets(config: Config, file: string): string[] {
  return Object.entries(config.platforms.webhook.routes).flatMap(([name, route]) =>
    // No run of its own: such a route's toolsets are named as having no effect (idleRouteKeys).
    route.deliver_only === true || route.cron_job !== undefined
      ? []
      : disabledServerToolsets(route.toolsets, config).map(
          (problem) => `[agent] ${file}: ${routeKey(name, route)}.toolsets: ${problem}`,
        ),
  );
}

/** `env is not used: it applies` / `args and env are not used: they apply`, and the `it`/`them` to remove. */
function unused(keys: readonly string[], applies: string): { text: string; them: string } {
  const one = keys.length === 1;
  return {
    text: `${keys.length > 2 ? `${keys.slice(0, -1).join(", ")} and ${keys.at(-1)}` : keys.join(" and ")} ${one ? "is" : "are"} not used: ${one ? "it applies" : "they apply"} ${applies}`,
    them: one ? "it" : "them",
  };
}

/**
 * Keys of an MCP server entry that its transport (or the rest of the entry) never reads: `env` on a url
 * server (often meant as its credentials), TLS keys on a command server, an `oauth` mapping without
 * `auth: oauth`, an Authorization header beside `auth: oauth` (whose token takes its place). The server
 * works without them, so the gateway says so instead of dropping them. Also a `trust` value that is neither
 * `full` nor `untrusted` (`Full`): it runs the server untrusted, which its writer rarely meant.
 */
export function unusedMcpKeys(entry: McpServerEntry): string[] {
  const problems: string[] = [];
  if (entry.url !== undefined) {
    const local = [
      ...(entry.args.length > 0 ? ["args"] : []),
      ...(Object.keys(entry.env).length > 0 ? ["env"] : []),
      ...(["idle_timeout_seconds", "max_lifetime_seconds"] as const)
        .filter((k) => entry[k] > 0)
        .map((k) => (entry.lifecycle?.[k] === entry[k] ? `lifecycle.${k}` : k)),
    ];
    if (local.length > 0) {
      const { text, them } = unused(
        local,
        "to the process of a command (stdio) server, and this is a url server",
      );
      const headers = local.includes("env")
        ? ` — send what the server needs in headers (e.g. Authorization: "Bearer \${TOKEN}"), or remove`
        : " — remove";
      problems.push(`${text}${headers} ${them}`);
    }
    if (entry.client_key !== undefined && entry.client_cert === undefined)
      problems.push(
        "client_key is not used without client_cert — set client_cert to the certificate file of that key",
      );
    // A plain http:// url has no TLS: nothing to verify, no handshake to present a certificate in.
    const tls = [
      ...(entry.ssl_verify !== true ? ["ssl_verify"] : []),
      ...(entry.client_cert !== undefined ? ["client_cert"] : []),
      ...(entry.client_key !== undefined && entry.client_cert !== undefined ? ["client_key"] : []),
    ];
    if (/^http:\/\//i.test(entry.url) && tls.length > 0) {
      const { text, them } = unused(tls, "to https:// urls, and this url is http://");
      problems.push(`${text} — use https:// (if the server serves TLS), or remove ${them}`);
    }
  } else {
    const remote = [
      ...(Object.keys(entry.headers).length > 0 ? ["headers"] : []),
      ...(entry.ssl_verify !== true ? ["ssl_verify"] : []),
      ...(entry.client_cert !== undefined ? ["client_cert"] : []),
      ...(entry.client_key !== undefined ? ["client_key"] : []),
      ...(entry.skip_preflight ? ["skip_preflight"] : []),
      ...(entry.oauth !== undefined ? ["oauth"] : []),
    ];
    if (remote.length > 0) {
      const { text, them } = unused(remote, "to url servers, and this is a command (stdio) server");
      // Credentials (headers, a login) have a place on a command server: its env. The TLS keys and the
      // endpoint check have none: the server is reached over its stdin and stdout.
      const credentials = remote.includes("headers") || remote.includes("oauth");
      problems.push(
        credentials
          ? `${text} — pass what it needs in env, or remove ${them}`
          : `${text} (it is reached over its stdin and stdout: no connection to verify or check) — remove ${them}`,
      );
    }
  }
  if (entry.oauth !== undefined && entry.auth !== "oauth" && entry.url !== undefined)
    problems.push("oauth is not used without auth: oauth — set auth: oauth to log in with it");
  if (entry.oauth !== undefined && entry.auth === "oauth" && entry.url !== undefined)
    problems.push(...unusedOauthKeys(entry.oauth));
  for (const key of ["idle_timeout_seconds", "max_lifetime_seconds"] as const) {
    const inner = entry.lifecycle?.[key];
    if (inner !== undefined && inner !== entry[key])
      problems.push(
        `${key} is written twice, ${entry[key]} at the top level and ${inner} under lifecycle — the top-level ${entry[key]} is used: remove one of them`,
      );
  }
  // A ${VAR} is rendered at each call: only a value as written can be judged here.
  if (entry.trust !== "full" && entry.trust !== "untrusted" && !entry.trust.includes("${"))
    problems.push(
      `trust: ${JSON.stringify(textWithoutUrlCredentials(entry.trust))} is neither full nor untrusted, so the server is treated as untrusted (a call of a tool without readOnlyHint: true needs approval) — write trust: full or trust: untrusted`,
    );
  problems.push(...bareVariables(entry));
  problems.push(...containerWithoutStdin(entry));
  problems.push(...sameHeaderTwice(entry));
  problems.push(...clientSetHeaders(entry));
  const authorization = Object.keys(entry.headers).find((k) => k.toLowerCase() === "authorization");
  if (entry.auth === "oauth" && entry.url !== undefined && authorization !== undefined)
    problems.push(
      `headers.${authorization} is not sent: auth: oauth sends the access token of the server's login as the Authorization header — remove the header, or remove auth: oauth to send it instead`,
    );
  return problems;
}

/**
 * `oauth` keys a login never reads beside the others: a `client_secret` without the `client_id` it was
 * issued with (a client svc registers gets its own secret), or with `token_endpoint_auth_method: none`
 * (which sends the client_id only); a `client_metadata_url` beside a `client_id` (the configured client
 * is used, never the document).
 */
function unusedOauthKeys(oauth: NonNullable<McpServerEntry["oauth"]>): string[] {
  const problems: string[] = [];
  if (oauth.client_secret !== undefined && oauth.client_id === undefined)
    problems.push(
      "oauth.client_secret is not used without oauth.client_id: a client svc registers gets its own secret — set oauth.client_id to the client the secret was issued with, or remove it",
    );
  else if (oauth.client_secret !== undefined && oauth.token_endpoint_auth_method === "none")
    problems.push(
      "oauth.client_secret is not sent: token_endpoint_auth_method none sends the client_id only — set token_endpoint_auth_method to client_secret_basic or client_secret_post (or leave it out), or remove client_secret",
    );
  if (oauth.client_metadata_url !== undefined && oauth.client_id !== undefined)
    problems.push(
      "oauth.client_metadata_url is not used: the configured oauth.client_id identifies the client — remove one of them",
    );
  return problems;
}

/** `headers` the HTTP client sets from each request itself (CLIENT_SET_HEADERS): they are not sent. */
function clientSetHeaders(entry: McpServerEntry): string[] {
  if (entry.url === undefined) return [];
  return Object.keys(entry.headers)
    .filter((key) => CLIENT_SET_HEADERS.has(key.toLowerCase()))
    .map((key) =>
      key.toLowerCase() === "host"
        ? `headers.${key} is not sent: each request carries the host of url as its Host header — write that host name in url (and reach it by DNS or /etc/hosts), or remove the header`
        : key.toLowerCase().startsWith("mcp-")
          ? `headers.${key} is not sent: svc's MCP connection sets ${key} itself (the session it opens, the protocol version it agrees on with the server) — remove it`
          : `headers.${key} is not sent: svc's HTTP client handles ${key} itself, for each request — remove it`,
    );
}

/**
 * Two `headers` keys that differ only in case (`Authorization` and `authorization`) name one HTTP header:
 * both values are sent joined by a comma, which a server reads as neither (a token `a, b`).
 */
function sameHeaderTwice(entry: McpServerEntry): string[] {
  if (entry.url === undefined) return [];
  const byName = new Map<string, string[]>();
  for (const key of Object.keys(entry.headers)) {
    const keys = byName.get(key.toLowerCase());
    if (keys === undefined) byName.set(key.toLowerCase(), [key]);
    else keys.push(key);
  }
  return [...byName.values()]
    .filter((keys) => keys.length > 1)
    .map(
      (keys) =>
        `${keys.map((k) => `headers.${k}`).join(" and ")} are one header (HTTP header names ignore case), so their values are sent joined by a comma — keep one of them`,
    );
}

/** Container engines whose `run` and `exec` leave the container without stdin unless given `-i`. */
const CONTAINER_ENGINES = new Set(["docker", "podman", "nerdctl"]);

/**
 * `command: docker` with `args: [run, --rm, image]`: without `-i` (`--interactive`) the container gets no
 * stdin, so svc's messages reach no server — it exits at once, or waits without ever answering the
 * handshake. Every MCP server's docker line has `-i` (`docker run -i --rm …`); one copied without it is
 * named. `-i` anywhere in the arguments counts (also inside a group such as `-it`), so a flag of the server
 * itself never makes a warning.
 */
function containerWithoutStdin(entry: McpServerEntry): string[] {
  if (entry.command === undefined) return [];
  const program = entry.command.trim().split("/").at(-1) ?? "";
  if (!CONTAINER_ENGINES.has(program)) return [];
  const words = entry.args.filter((a): a is string => typeof a === "string");
  const positional = words.filter((a) => !a.startsWith("-"));
  const sub = positional[0] === "container" ? positional[1] : positional[0];
  if (sub !== "run" && sub !== "exec") return [];
  const interactive = words.some(
    (a) => a === "--interactive" || a === "--interactive=true" || /^-[A-Za-z]*i[A-Za-z]*$/.test(a),
  );
  if (interactive) return [];
  return [
    `args: ${program} ${sub} without -i gives the container no stdin, so the server gets none of svc's messages (it exits at once, or never answers the handshake) — add -i after ${sub} (${program} ${sub} -i …)`,
  ];
}

/** `$TOKEN` or `Bearer $TOKEN`: a variable as a shell writes it, which svc does not replace. */
const BARE_VARIABLE = /^(?:(?:Bearer|Token|Basic) )?\$[A-Za-z_][A-Za-z0-9_]*$/i;

/**
 * The `args`, `env` and `headers` values the entry's transport passes on that are written `$NAME` (or
 * `Bearer $NAME`), as a shell or a copied `claude mcp add` line writes them: svc replaces only `${NAME}`, so the
 * text itself would reach the server (a token `$GITHUB_TOKEN`, refused). The value is not quoted.
 */
function bareVariables(entry: McpServerEntry): string[] {
  const passed =
    entry.url === undefined
      ? [
          ...entry.args.map((value, i) => [`args[${i}]`, value] as const),
          ...Object.entries(entry.env).map(([key, value]) => [`env.${key}`, value] as const),
        ]
      : Object.entries(entry.headers).map(([key, value]) => [`headers.${key}`, value] as const);
  return passed
    .filter(([, value]) => typeof value === "string" && BARE_VARIABLE.test(value))
    .map(
      ([key]) =>
        `${key}: a $ followed by a name is how a shell writes a variable, but svc replaces only \${NAME} (with braces), so this text itself is passed to the server — write it as \${NAME}, in quotes`,
    );
}
