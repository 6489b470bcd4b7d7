import { policyApprovals } from "../../actors/mcp/approvals.js";
import { McpHub } from "../../actors/mcp/hub.js";
import { oauthProviderFor } from "../../actors/oauth/provider.js";
import { secretScope } from "../../config/envFile.js";
import { addVariablesAdvice, type InterpolationScope } from "../../config/interpolate.js";
import type { LoadedConfig } from "../../config/load.js";
import { type McpServerEntry, transportKind } from "../../config/sections/mcp.js";
import { serverNames, withWrittenOrder } from "../../config/serverOrder.js";
import { redactCredentials } from "../../io/credentials.js";
import { leaveGoneDirectory } from "../../io/goneDirectory.js";
import { silentLogger } from "../../io/log.js";
import { terminalText } from "../../io/terminalText.js";
import { unsetMcpVariablesByEffect } from "../config/unsetVariables.js";
import { subscriptionSecrets } from "../subscriptionSecrets.js";
import { cliSampler } from "./cliSampler.js";

/** One server's answer to "is it working?". */
export interface ServerCheck {
  readonly name: string;
  readonly transport: "stdio" | "http" | "sse";
  readonly outcome: "ok" | "failed" | "skipped" | "lazy";
  /** Registered tools, when ok (or lazy: registered from the schema cache). */
  readonly tools?: number;
  /** Why it failed, or why it was skipped: one line, no credential, no escape sequence. */
  readonly reason?: string;
  /** When ok: what it connected with that may not be meant (an unset `${VAR}` passed on as written). */
  readonly warning?: string;
}

/** `ok (N tools)`, `failed: <reason>`, `skipped (...)`: the STATUS column. */
export function describeCheck(check: ServerCheck): string {
  if (check.outcome === "ok")
    return `ok (${check.tools} tool${check.tools === 1 ? "" : "s"})${check.warning === undefined ? "" : ` — warning: ${check.warning}`}`;
  if (check.outcome === "skipped") return `skipped (${check.reason})`;
  if (check.outcome === "lazy")
    return `lazy (${check.tools} tool${check.tools === 1 ? "" : "s"} from the schema cache; connects at its first call)`;
  return `failed: ${check.reason}`;
}

const oneLine = (text: string) => terminalText(redactCredentials(text)).replace(/\s*\n\s*/g, " ");

const variables = (names: readonly string[]) => names.map((n) => `\${${n}}`).join(", ");
const isAre = (names: readonly string[]) => (names.length === 1 ? "is" : "are");
const addThem = (names: readonly string[], envFile: string) =>
  addVariablesAdvice(names, `${envFile} or the environment`);

/**
 * The `${VAR}`s outside a remote server's url and headers that are not set: the connect passes them on
 * as written (`svc mcp test`, `list`, the gateway alike), which is rarely meant. Undefined when none.
 */
export function literalVariablesWarning(
  entry: McpServerEntry,
  scope: InterpolationScope,
  envFile: string,
): string | undefined {
  const { literal } = unsetMcpVariablesByEffect(entry, scope);
  if (literal.length === 0) return undefined;
  const one = literal.length === 1;
  return `${variables(literal)} ${isAre(literal)} not set, so ${one ? "it is" : "they are"} passed on as written — ${addThem(literal, envFile)} if ${one ? "it is meant as a variable" : "they are meant as variables"}`;
}

/**
 * Connects each named enabled server at once (in parallel), lists its tools and closes it, each bounded by
 * `timeoutMs`. Never interactive: a server that needs a login fails with the connect's reason (run
 * `svc mcp login`), and no browser opens. A `${VAR}` of a remote server's url or headers that is not set
 * fails it without a connect, naming the variable, as a connect would; one elsewhere keeps its literal
 * text as in any connect, and an ok check carries a warning naming it. With `wakeLazy: false` (`svc mcp
 * list`) a lazy server with a schema cache for its entry is not started: it is shown lazy with its cached
 * tool count, as it stays until its first call; `svc mcp test --all` wakes it.
 */
export async function checkServers(
  loaded: LoadedConfig,
  names: readonly string[],
  timeoutMs: number,
  options: { readonly wakeLazy?: boolean } = {},
): Promise<ServerCheck[]> {
  // Its stdio servers start where the gateway's would, also when the working directory is gone.
  leaveGoneDirectory(loaded.paths.home);
  const scope = secretScope(loaded.paths);
  const results = new Map<string, ServerCheck>();
  const entries: Record<string, McpServerEntry> = {};
  for (const name of names) {
    const entry = Object.hasOwn(loaded.config.mcp_servers, name)
      ? loaded.config.mcp_servers[name]
      : undefined;
    if (entry === undefined) continue;
    const transport = transportKind(entry);
    if (!entry.enabled) {
      results.set(name, { name, transport, outcome: "skipped", reason: "enabled: false" });
      continue;
    }
    const { failing } = unsetMcpVariablesByEffect(entry, scope);
    if (failing.length > 0) {
      results.set(name, {
        name,
        transport,
        outcome: "failed",
        reason: `${variables(failing)} ${isAre(failing)} not set — ${addThem(failing, loaded.paths.env)}`,
      });
      continue;
    }
    entries[name] = entry;
  }
  // The order the names were given in (config.yaml's), which a new object does not keep for all names.
  withWrittenOrder(entries, names);
  const toConnect = serverNames(entries);
  const logger = silentLogger();
  // A server whose entry enables sampling is offered it as in the gateway: one that asks the model while it
  // lists its tools would fail a check that left the capability out.
  const sampling = Object.values(entries).some((entry) => entry.sampling.enabled);
  const subscriptions = sampling ? await subscriptionSecrets(loaded) : [];
  const hub = new McpHub({
    servers: entries,
    cacheDir: loaded.paths.mcpCache,
    scope: () => secretScope(loaded.paths),
    logger,
    approvals: policyApprovals("deny", logger),
    ...(sampling ? { runner: cliSampler(loaded, subscriptions, logger) } : {}),
    interactive: false,
    // A server given up (connect_timeout, --timeout, Ctrl-C) is killed at once: the command ends on time.
    killGivenUp: true,
    handshakeTimeoutMs: timeoutMs,
    oauthProviderFor: (server, entry, { interactive }) =>
      oauthProviderFor(server, entry, { interactive, paths: loaded.paths, logger }),
  });
  hub.start();
  try {
    await Promise.all(
      toConnect.map(async (name) => {
        const transport = transportKind(entries[name] as McpServerEntry);
        if (options.wakeLazy === false && hub.status().find((s) => s.name === name)?.state === "lazy") {
          results.set(name, { name, transport, outcome: "lazy" });
          return;
        }
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<"timeout">((resolve) => {
          timer = setTimeout(() => resolve("timeout"), timeoutMs);
        });
        const status = await Promise.race([hub.settled(name, { connect: true }), timeout]);
        clearTimeout(timer);
        if (status === "timeout") {
          results.set(name, {
            name,
            transport,
            outcome: "failed",
            reason: hub.connectSoFar(name, `no answer within ${timeoutMs / 1000} s (--timeout)`),
          });
        } else if (status.state === "connected") {
          // Counted once every check has ended: a server listed earlier may take some of its names.
          const warning = literalVariablesWarning(entries[name] as McpServerEntry, scope, loaded.paths.env);
          results.set(name, {
            name,
            transport,
            outcome: "ok",
            ...(warning === undefined ? {} : { warning }),
          });
        } else {
          results.set(name, {
            name,
            transport,
            outcome: "failed",
            // The NAME column already says which server.
            reason: oneLine(status.lastError ?? status.state).replace(`mcp_servers.${name}: `, ""),
          });
        }
      }),
    );
    // What the gateway registers: its merge across servers in configuration order, the names a
    // server listed earlier holds left out (`a.b` and `a_b` both register as mcp__a_b__*).
    const registered = hub.tools();
    for (const [name, check] of results) {
      if (check.outcome !== "ok" && check.outcome !== "lazy") continue;
      results.set(name, { ...check, tools: registered.filter((tool) => tool.server === name).length });
    }
  } finally {
    await hub.stop();
  }
  return names.flatMap((n) => {
    const result = results.get(n);
    return result === undefined ? [] : [result];
  });
}
