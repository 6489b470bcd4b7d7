import { delimiter, dirname, isAbsolute } from "node:path";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { FetchLike, Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { describe, type WrittenAs } from "../../config/describe.js";
import { flowItem } from "../../config/format.js";
import { withUrlAsWritten } from "../../config/givenUrl.js";
import { givenBy } from "../../config/givenValues.js";
import { type InterpolationScope, interpolate, keptAsWrittenHint } from "../../config/interpolate.js";
import { type McpServerEntry, transportKind } from "../../config/sections/mcp.js";
import { describeError, SvcError } from "../../errors.js";
import { combinedSecrets, scrub } from "../credentials.js";
import { cutText } from "../cutText.js";
import {
  crlfScript,
  crlfScriptFix,
  executableProblem,
  interpreterProblem,
  programFile,
  programOnPath,
} from "../executable.js";
import { openFilesProblem } from "../openFiles.js";
import type { GroupNote } from "../processGroups.js";
import { shellAssignmentName } from "../shellAssignment.js";
import { joinStderr, keepStderrLine, STDERR_TAIL_LINES } from "../stderrTail.js";
import { blockedPortHint } from "./blockedPort.js";
import type { ConnectStall } from "./connectAttempts.js";
import { entrySecrets, OwnWordsError, referencedSecrets, withoutSecrets } from "./entrySecrets.js";
import type { EraOutcome } from "./eraSequence.js";
import { unsupportedVersionHint, withBlankVersionNamed } from "./eras.js";
import { refusedVersionsHint } from "./offeredVersion.js";
import type { StreamRefusal } from "./pacedStreams.js";
import { preflight } from "./preflight.js";
import { NOTHING_ON_STDERR, STDERR_SO_FAR, STDERR_TAIL, UNENDED_STDOUT } from "./processOutput.js";
import {
  emptyVariablesNote,
  isAuthorizationHeader,
  renderEntry,
  type SentAuthorization,
  sentAuthorization,
  withoutConfiguredAuthorization,
} from "./render.js";
import type { McpSession, SessionHandlers } from "./session.js";
import type { StdioTransport } from "./stdioTransport.js";
import { createTlsFetch } from "./tlsFetch.js";
import { tlsHint, withoutOpensslRecord } from "./tlsHints.js";
import {
  describeTransportError,
  httpStatusOf,
  ownErrorInSseStream,
  RefusedAfterInitializeError,
  systemsWords,
  unexpectedContentType,
} from "./transportErrors.js";
import { unreachableUrlHint } from "./unreachableUrl.js";

/** Supplies the OAuth provider of an `auth: oauth` server (issue 6); `interactive: false` for background connects. */
export type OAuthProviderFor = (
  server: string,
  entry: McpServerEntry,
  options: { interactive: boolean },
) => OAuthClientProvider | Promise<OAuthClientProvider>;

/** A transport for a rendered entry, called once per session attempt (each protocol era opens its own). */
export type TransportFor = (server: string, entry: McpServerEntry) => Transport;

export interface ConnectOptions {
  /** Read at every connect, so a variable added to `.env` later is picked up. */
  readonly scope: () => InterpolationScope;
  readonly oauthProviderFor?: OAuthProviderFor;
  readonly interactive: boolean;
  readonly handlers?: SessionHandlers;
  readonly onStderr?: (line: string) => void;
  /** A stdio server's stderr text after its last newline ("" when none), credentials redacted. */
  readonly onStderrUnfinished?: (text: string) => void;
  /** A stdio server's stdout line that is no MCP message (a banner, a usage text), credentials redacted. */
  readonly onOtherOutput?: (line: string) => void;
  /** The beginning of a stdio server's stdout line not ended yet ("" once it ends), credentials redacted. */
  readonly onStdoutUnfinished?: (start: string) => void;
  /** An SSE server's stream opened and its `endpoint` event is awaited (`true`), or no longer (`false`). */
  readonly onAwaitingEndpoint?: (awaiting: boolean) => void;
  readonly onLost?: (reason: string) => void;
  /** The server answered an id svc never sent while the session opened (`OpenSessionOptions`). */
  readonly onStrayAnswer?: (answer: string) => void;
  /** The session's handshake is about to be sent (`OpenSessionOptions`): after the preflight and any login. */
  readonly onHandshake?: () => void;
  /** The era sequence goes on to its next request, after what became of the one before (`OpenSessionOptions`). */
  readonly onEraFallback?: (outcome: EraOutcome) => void;
  /** A stdio server whose connect is given up (`signal`) is killed at once, its process group with it. */
  readonly killGivenUp?: boolean;
  /**
   * A url server: how to read where its connections stopped when none was made (`TlsFetch.stall`), for the
   * message of a connect given up, and, for a url a `${VAR}` gave, how that message names it and its host
   * (`withUrlAsWritten`).
   */
  readonly onConnections?: (
    stall: () => ConnectStall | undefined,
    shownAsWritten?: (text: string) => string,
  ) => void;
  /** Bounds a url server's TCP connect and TLS handshake below connect_timeout (`HubOptions`). */
  readonly handshakeTimeoutMs?: number;
  /** The entry's credentials, known before the server can send anything (a log message in the handshake). */
  readonly onSecrets?: (secrets: readonly string[]) => void;
  /**
   * The gateway's own secrets (`HubOptions.hiddenValues`), redacted with the entry's credentials from what the
   * server says before a message quoting it is cut.
   */
  readonly hiddenValues?: () => readonly string[];
  readonly signal?: AbortSignal;
  readonly parentEnv?: NodeJS.ProcessEnv;
  /** Notes a stdio server's process group while it runs (the gateway's: its next start stops one it left). */
  readonly group?: GroupNote;
  /** Replaces the entry's own transport, with no preflight, TLS or OAuth (tests over InMemoryTransport). */
  readonly transportFor?: TransportFor;
  /**
   * Streamable HTTP: where the refusal of the server's event stream (405 to its `GET`) at the url the connect
   * renders is kept beyond this connection (the hub's: the server's, for the gateway's life).
   */
  readonly streamRefusal?: (url: string) => StreamRefusal;
}

/** Renders the entry, checks TLS files and the endpoint, then opens a session in the configured era. */
export async function connectServer(
  name: string,
  entry: McpServerEntry,
  options: ConnectOptions,
): Promise<McpSession> {
  const scope = options.scope();
  const rendered = withoutConfiguredAuthorization(renderEntry(name, entry, scope));
  const secrets = [...entrySecrets(rendered), ...referencedSecrets(entry, scope)];
  options.onSecrets?.(secrets);
  // Read at each use: a login adds its tokens to `secrets` (hidingTokens), a reload may change the gateway's.
  // The same list while neither changed: each line the server writes is redacted with it.
  const redacted = combinedSecrets(() => secrets, options.hiddenValues);
  const hide = (err: unknown) => withoutSecrets(err, secrets);
  const timeoutMs = rendered.connect_timeout * 1000;
  const transportOptions = {
    // Before the transport cuts what a server sent, and so before the stderr tail is cut from its lines.
    redact: (raw: string) => scrub(raw, redacted()),
    ...(options.onStderr === undefined ? {} : { onStderr: options.onStderr }),
    ...(options.parentEnv === undefined ? {} : { parentEnv: options.parentEnv }),
    ...(options.group === undefined ? {} : { group: options.group }),
  };
  const transportFor = options.transportFor;
  // Imported at the first connect: a start that connects no server does not load the MCP SDK's client and
  // protocol layer (nor the ajv-formats they bring), nor its transports (their OAuth client and its schemas).
  // A process at its limit on open files cannot read the modules: that connect fails as starting the server
  // would there, naming the limit.
  const [{ openSession }, { createTransport }] = await Promise.all([
    import("./session.js"),
    import("./transport.js"),
  ]).catch((err: unknown) => {
    const openFiles = openFilesProblem((err as NodeJS.ErrnoException).code);
    if (openFiles === undefined) throw err;
    throw new SvcError("mcp_connect", `mcp_servers.${name}: the server could not be started: ${openFiles}`, {
      cause: err,
    });
  });
  if (transportFor !== undefined) {
    return openSession({
      name,
      protocol: rendered.protocol,
      makeTransport: () => transportFor(name, rendered),
      timeoutMs,
      ...sessionExtras(options, redacted),
    })
      .then((session) => {
        session.secrets = secrets;
        return session;
      })
      .catch((err: unknown) => {
        throw hide(scoped(name, err, redacted(), undefined, undefined, undefined, transportKind(rendered)));
      });
  }
  if (transportKind(rendered) === "stdio") {
    // One report per process: a connect that starts a second one (auto's server/discover probe after a
    // refused initialize, stateless's legacy retry) quotes only the last one's stderr and exit, never the
    // lines or the SIGTERM of the process it closed before.
    let child: ChildReport = { stderr: [], stdout: [] };
    // The latest process: the one a connect given up now waits on.
    let latest: Transport | undefined;
    if (options.killGivenUp === true)
      options.signal?.addEventListener("abort", () => (latest as StdioTransport | undefined)?.kill(), {
        once: true,
      });
    return openSession({
      name,
      protocol: rendered.protocol,
      makeTransport: () => {
        const report: ChildReport = { stderr: [], stdout: [] };
        child = report;
        latest = createTransport(rendered, {
          ...transportOptions,
          onStderr: (line) => {
            keepStderrLine(report.stderr, line);
            options.onStderr?.(line);
          },
          onStderrUnfinished: (raw) => options.onStderrUnfinished?.(scrub(raw, redacted())),
          onExit: (how) => {
            report.exit = how;
          },
          onProtocolError: (reason, tooLong) => {
            report.brokeProtocol = reason;
            report.tooLong = tooLong === true;
          },
          onOtherOutput: (line) => {
            report.stdout.push(line);
            if (report.stdout.length > STDERR_TAIL_LINES) report.stdout.shift();
            options.onOtherOutput?.(line);
          },
          ...(options.onStdoutUnfinished === undefined
            ? {}
            : { onStdoutUnfinished: options.onStdoutUnfinished }),
        });
        return latest;
      },
      timeoutMs,
      ...sessionExtras(options, redacted),
    })
      .then((session) => {
        const report = child;
        session.exitReport = (when) => describeExit(report, when);
        session.closedOverLongMessage = () => report.tooLong === true;
        session.secrets = secrets;
        return session;
      })
      .catch((err: unknown) => {
        const given = {
          command: gaveValue(entry, "command", scope),
          path: gaveValue(entry.env, "PATH", scope),
        };
        throw hide(
          scoped(
            name,
            err,
            redacted(),
            rendered.command,
            undefined,
            child,
            undefined,
            undefined,
            rendered,
            given,
          ),
        );
      });
  }
  // A url a `${VAR}` gave: its failures name it, and its host, as config.yaml writes it.
  const givenUrl = gaveValue(entry, "url", scope);
  const asWritten = (err: unknown) =>
    givenUrl === undefined ? err : withUrlShownAsWritten(err, rendered.url as string, givenUrl);
  const shownAsWritten =
    givenUrl === undefined
      ? undefined
      : (text: string) => withUrlAsWritten(text, rendered.url as string, givenUrl);
  const tls = createTlsFetch(name, rendered, {
    written: entry,
    connectTimeoutMs: Math.min(timeoutMs, 10_000, options.handshakeTimeoutMs ?? Number.POSITIVE_INFINITY),
    // A call, or the connect's own requests, may wait this long for an answer.
    answerWaitMs: Math.max(rendered.timeout * 1000, timeoutMs),
  });
  options.onConnections?.(
    () => tls.stall(),
    givenUrl === undefined ? undefined : (text) => withUrlAsWritten(text, rendered.url as string, givenUrl),
  );
  try {
    if (!rendered.skip_preflight) {
      await preflight(
        name,
        rendered.url as string,
        rendered.headers,
        tls.fetch,
        Math.min(timeoutMs, 10_000),
        entry.url,
        transportKind(rendered) === "sse" ? ["GET"] : ["HEAD", "GET"],
        options.signal,
      );
    }
    const authProvider =
      rendered.auth === "oauth"
        ? hidingTokens(await oauthProvider(name, rendered, options), secrets)
        : undefined;
    // A browser login happens here, before the handshake, so its minutes never run on the SDK's request timers.
    if (authProvider !== undefined && options.interactive) await authProvider.tokens();
    // Given up meanwhile (connect_timeout, stop, reload): no session may open that nobody would close.
    if (options.signal?.aborted === true) throw new Error("connect was cancelled");
    const fetch = authProvider === undefined ? tls.fetch : retryingFetch(authProvider, tls.fetch);
    const streamRefusal = options.streamRefusal?.(rendered.url as string);
    const session = await openSession({
      name,
      protocol: rendered.protocol,
      makeTransport: () =>
        createTransport(rendered, {
          ...transportOptions,
          ...(options.onAwaitingEndpoint === undefined
            ? {}
            : { onAwaitingEndpoint: options.onAwaitingEndpoint }),
          fetch,
          ...(authProvider === undefined ? {} : { authProvider }),
          ...(streamRefusal === undefined ? {} : { streamRefusal }),
        }),
      timeoutMs,
      ...sessionExtras(options, redacted),
      ...(shownAsWritten === undefined ? {} : { shown: shownAsWritten }),
    });
    session.addCleanup(() => tls.close());
    session.secrets = secrets;
    if (authProvider === undefined)
      session.unauthorizedHint = unauthorizedHint(name, sentAuthorization(entry, rendered, scope));
    if (authProvider !== undefined) endsWith(authProvider, session);
    const url = rendered.url;
    if (url !== undefined) session.unreachableHint = (text) => unreachableUrlHint(name, text, url);
    if (url !== undefined && givenUrl !== undefined)
      session.shownAsWritten = (text) => withUrlAsWritten(text, url, givenUrl);
    return session;
  } catch (err) {
    await tls.close().catch(() => undefined);
    const authorization = sentAuthorization(entry, rendered, scope);
    // Named as written before the entry's secrets are hidden: a host `.env` gave is one of them.
    throw hide(
      asWritten(
        scoped(
          name,
          err,
          redacted(),
          undefined,
          rendered.auth,
          undefined,
          transportKind(rendered),
          authorization,
          rendered,
          {},
          shownAsWritten,
          entry,
        ),
      ),
    );
  }
}

/**
 * A stdio entry's `command` and `env.PATH` as config.yaml writes them, when a `${VAR}` in them gave a value
 * (from `.env` or the environment, whatever the variable's name): a message names them so, never by what
 * the variable gave, and builds no fix from that value.
 */
export interface GivenCommand {
  readonly command?: WrittenAs | undefined;
  readonly path?: WrittenAs | undefined;
}

/**
 * The file's text of `holder[key]` when a `${VAR}` in it gave a value (givenBy); undefined when none did, as
 * for a variable nothing sets, whose text was used as written and is quoted as it is.
 */
function gaveValue(
  holder: object | undefined,
  key: string,
  scope: InterpolationScope,
): WrittenAs | undefined {
  const given = givenBy(holder, key);
  if (given === undefined || typeof given.text !== "string") return undefined;
  return interpolate(given.text, scope).value === given.text ? undefined : given;
}

/**
 * `err` with a url a `${VAR}` gave (`url`, the value; `given`, config.yaml's text) named as config.yaml writes
 * it, and its host as `<the host of "${MCP_URL}" (…)>` (withUrlAsWritten): the system's words quote the host
 * (`getaddrinfo ENOTFOUND <host>`, `connect ECONNREFUSED <host>:<port>`), and so do the hints made from them.
 * Its cause, which quotes the value, is not kept.
 */
function withUrlShownAsWritten(err: unknown, url: string, given: WrittenAs): unknown {
  if (!(err instanceof Error) || err instanceof OwnWordsError) return err;
  const text = describeError(err);
  const message = withUrlAsWritten(text, url, given);
  if (message === text) return err;
  return new SvcError(err instanceof SvcError ? err.code : "mcp_connect", message);
}

/** What a stdio server process left behind: its last stderr lines and how it exited. */
interface ChildReport {
  readonly stderr: string[];
  /** Its last stdout lines that were no JSON-RPC messages (a usage text printed for wrong arguments). */
  readonly stdout: string[];
  exit?: string;
  /** Why svc closed the connection itself (a message over the size limit). */
  brokeProtocol?: string;
  /** `brokeProtocol` is a message over the size limit (a replay would get it again), not a closed stdout. */
  tooLong?: boolean;
}

/**
 * A message about a server that has not answered, with what it wrote on stderr meanwhile (often why);
 * with nothing on stderr, the lines on stdout that were no MCP message (an HTTP server started as a
 * stdio one: `listening on http://localhost:3000/mcp`).
 */
/** Why a connect given up while an SSE stream was open waited: the url sent no `endpoint` event. */
export const NO_ENDPOINT_EVENT =
  "the SSE stream opened but sent no endpoint event: the url may not be a legacy-SSE MCP endpoint (for a Streamable HTTP server set transport: http, else check the url's path)";

export function withStderrSoFar(
  message: string,
  lines: readonly string[],
  stdout: readonly string[] = [],
  stdoutUnfinished = "",
): string {
  const stderr = joinStderr(lines);
  const pretty = `${prettyPrintedJson(stdout) ? ` — ${PRETTY_PRINTED}` : ""}${unendedMessage(stdoutUnfinished)}`;
  if (stderr !== "") return `${message} — ${STDERR_SO_FAR}${stderr}${pretty}`;
  const other = joinStderr(stdout);
  if (pretty !== "") return `${message}${pretty}`;
  return other === ""
    ? message
    : `${message} — ${NOTHING_ON_STDERR}, and on stdout no MCP message but: ${other}`;
}

/** How much of a message not ended by a line break is quoted. */
const UNENDED_QUOTE_CHARS = 80;

/**
 * A JSON-RPC message written without the line break after it (`process.stdout.write(JSON.stringify(m))`,
 * Python's `print(..., end="")`): the stdio transport reads a message once its line ends, so it was never read.
 */
function unendedMessage(start: string): string {
  if (!/^\s*\{\s*"jsonrpc"\s*:/.test(start)) return "";
  const quoted = start.trim();
  return ` — ${UNENDED_STDOUT} (${quoted.length > UNENDED_QUOTE_CHARS ? `${cutText(quoted, UNENDED_QUOTE_CHARS)}…` : quoted}), but the stdio transport reads a message once its line ends — have the server write a newline after each message`;
}

const PRETTY_PRINTED =
  "its stdout held parts of a JSON message written over several lines (pretty-printed), but the stdio transport takes each message as JSON on one line — have the server write its messages without line breaks";

/** One line of pretty-printed JSON: a bracket alone, or a `"key": value` member. */
const JSON_FRAGMENT = /^(?:[{}[\]],?|"(?:[^"\\]|\\.)*"\s*:.*)$/;

/**
 * Whether the stdout lines that were no message are the end of a message written over several lines
 * (`JSON.stringify(message, null, 2)`, Python's `json.dumps(indent=2)`): each is a fragment of JSON, and
 * one closes an object. Quoted as they are, they would not say why nothing was read.
 */
function prettyPrintedJson(lines: readonly string[]): boolean {
  const trimmed = lines.map((line) => line.trim());
  return (
    trimmed.length >= 2 && trimmed.every((l) => JSON_FRAGMENT.test(l)) && trimmed.some((l) => /^}/.test(l))
  );
}

function stderrTail(child: ChildReport, started = false): string {
  const tail = joinStderr(child.stderr);
  // After a handshake, command and args were fine: that hint would only mislead.
  if (tail !== "") return `${STDERR_TAIL}${tail}`;
  if (started) return NOTHING_ON_STDERR;
  // A program run with the wrong arguments often prints its usage on stdout, which carries MCP messages
  // only: those lines were skipped, and are what says why.
  const stdout = joinStderr(child.stdout);
  if (stdout !== "")
    return `${NOTHING_ON_STDERR}, and on stdout no MCP message but: ${stdout} — check command and args`;
  return `${NOTHING_ON_STDERR}; check command and args`;
}

/** `the server process exited (code 3) <when> — its stderr: ...`, or undefined while it runs. */
function describeExit(child: ChildReport, when?: string): string | undefined {
  if (child.brokeProtocol !== undefined) return child.brokeProtocol;
  if (child.exit === undefined) return undefined;
  return `the server process exited (${child.exit})${when === undefined ? "" : ` ${when}`} — ${stderrTail(child, true)}`;
}

/**
 * A whole command line written into `command` (as some clients' configs and install links do) is looked up
 * as one program name: when its first word is a program, say how to split it. A command a `${VAR}` gave
 * (`given.command`) gets no fix that writes part of it back (the split, a shell assignment's name, the
 * program's path on the gateway's PATH).
 */
export function notFoundHint(
  command: string,
  cwd: string = process.cwd(),
  entryPath?: string,
  given: GivenCommand = {},
): string {
  const hidden = given.command !== undefined;
  // An unset variable keeps its literal text: the command looked up was `${NODE_BIN}` (of the file's text
  // only, when a variable gave the rest).
  const unset = keptAsWrittenHint(
    command,
    "command was run",
    hidden ? String(given.command?.text) : undefined,
  );
  if (unset !== undefined) return unset;
  const [program, ...rest] = command.trim().split(/\s+/);
  // `GITHUB_TOKEN=... npx` copied from a shell line: the assignment is the shell's, and svc runs none.
  const variable = hidden ? undefined : shellAssignmentName(program ?? "");
  if (variable !== undefined)
    return `${variable}=... before the program is how a shell sets a variable, and no shell runs command: write the program alone as command (its arguments in args) and ${variable} under env (a secret as \${${variable}}, its value in .env)`;
  const found =
    !hidden &&
    program !== undefined &&
    rest.length > 0 &&
    !/["'\\]/.test(command) &&
    executableProblem(program, entryPath ?? process.env.PATH ?? "") === undefined;
  // `./server.sh`: no PATH lookup, the path is taken from the gateway's working directory, not config.yaml's.
  if (!found && rest.length === 0 && program?.includes("/") === true && !isAbsolute(program))
    return `a relative command is taken from the working directory (${cwd}), where there is no such file — write its absolute path (or ~/...)`;
  if (!found && entryPath !== undefined && rest.length === 0 && program?.includes("/") === false)
    return entryPathHint(program, entryPath, given);
  if (!found) return "check command (and PATH)";
  // Each entry as YAML reads it back: `@scope/server` quoted (a plain YAML value cannot start with @).
  return `command is the program alone: write command: ${flowItem(program)} and args: [${rest.map(flowItem).join(", ")}]`;
}

/**
 * `env: {PATH: ...}` replaces the gateway's PATH for the server process, and the program is looked up in it
 * (as `env PATH=... program` does): a PATH written without the gateway's directories loses a program (`node`,
 * `npx`) the gateway itself finds, which "check command (and PATH)" would not explain.
 */
function entryPathHint(program: string, entryPath: string, given: GivenCommand): string {
  // An env.PATH or command a `${VAR}` gave is named as the file writes it, and no fix is built from it.
  const where = `it was looked up in the entry's env.PATH (${given.path === undefined ? entryPath : describe(given.path)}), which replaces the gateway's PATH for the server process`;
  const gateway = programOnPath(program, process.env.PATH ?? "");
  if (gateway === undefined) return `${where} — check command and env.PATH`;
  const keep =
    given.path === undefined
      ? `PATH: "${entryPath}${delimiter}\${PATH}" keeps the gateway's directories`
      : `ending it in ${delimiter}\${PATH} keeps the gateway's directories`;
  if (given.command !== undefined)
    return `${where}, and the gateway's PATH has it: add its directory to env.PATH (${keep})`;
  return `${where}, and the gateway's PATH has it as ${gateway}: add ${dirname(gateway)} to env.PATH (${keep}), or write command: ${gateway}`;
}

/**
 * A script whose `#!/usr/bin/env node` line ends in a carriage return (saved with Windows line endings): env
 * starts, finds no program named `node\r` and exits 127 — say why, since its stderr shows only the name.
 */
function crlfInterpreterHint(
  child: ChildReport,
  command?: string,
  entryPath?: string,
  hidden = false,
): string {
  if (child.exit !== "code 127" || command === undefined) return "";
  const file = programFile(command, entryPath ?? process.env.PATH ?? "");
  if (file === undefined || !crlfScript(file)) return "";
  // A command a `${VAR}` gave: its file is not named by its path.
  const named = hidden ? "the file" : file;
  return ` — ${named}'s first line ends with a carriage return (the file was saved with Windows line endings), so its interpreter's name ends with one too: ${crlfScriptFix(hidden ? "<the file>" : file)}`;
}

/** Our own errors pass through; others get the server name and their causes ("fetch failed" says little). */
function scoped(
  name: string,
  err: unknown,
  /** Redacted from the server's text before it is cut (describeTransportError). */
  secrets: readonly string[],
  command?: string,
  auth?: string,
  child?: ChildReport,
  kind?: "stdio" | "http" | "sse",
  authorization: SentAuthorization = { kind: "none" },
  /** The rendered entry: a remote one's url and TLS settings, a stdio one's env.PATH. */
  rendered?: McpServerEntry,
  /** A stdio entry's command and env.PATH a `${VAR}` gave, named as the file writes them. */
  given: GivenCommand = {},
  /** A url a `${VAR}` gave named as the file writes it, before `secrets` are hidden (withUrlAsWritten). */
  asWritten?: (text: string) => string,
  /** A remote entry as config.yaml writes it: a CA bundle path a `${VAR}` gave is named so (tlsHint). */
  written?: McpServerEntry,
): unknown {
  if (err instanceof SvcError) return err;
  const own = ownErrorInSseStream(name, err);
  if (own !== undefined) return own;
  const hidden = given.command !== undefined;
  const shown = given.command === undefined ? command : describe(given.command);
  if ((err as NodeJS.ErrnoException).code === "ENOENT" && command !== undefined) {
    const interpreter = interpreterProblem(
      command,
      rendered?.env.PATH ?? process.env.PATH ?? "",
      undefined,
      hidden,
    );
    return new SvcError(
      "mcp_connect",
      interpreter === undefined
        ? `mcp_servers.${name}: command not found: ${shown} — ${notFoundHint(command, undefined, rendered?.env.PATH, given)}`
        : `mcp_servers.${name}: command could not be started: ${shown} — ${interpreter}`,
      { cause: err },
    );
  }
  const openFiles = command === undefined ? undefined : openFilesProblem((err as NodeJS.ErrnoException).code);
  if (openFiles !== undefined)
    return new SvcError("mcp_connect", `mcp_servers.${name}: the server could not be started: ${openFiles}`, {
      cause: err,
    });
  if ((err as NodeJS.ErrnoException).code === "EACCES" && command !== undefined) {
    return new SvcError(
      "mcp_connect",
      `mcp_servers.${name}: command is not an executable file: ${shown} — make it executable (chmod +x) or set command to its interpreter and args to the script`,
      { cause: err },
    );
  }
  // The SDK says only "Connection closed" when the process exits during the handshake: say that it
  // exited, how, and what it wrote on stderr (usually the reason: a missing key, a bad argument).
  if (child?.brokeProtocol !== undefined)
    return new SvcError("mcp_connect", `mcp_servers.${name}: ${child.brokeProtocol}`, { cause: err });
  if (child !== undefined && /Connection closed/i.test(describeTransportError(err, secrets))) {
    return new SvcError(
      "mcp_connect",
      `mcp_servers.${name}: the server process ${child.exit === undefined ? "closed the connection" : `exited (${child.exit})`} before the MCP handshake finished — ${stderrTail(child)}${crlfInterpreterHint(child, command, rendered?.env.PATH, hidden)}`,
      { cause: err },
    );
  }
  let text = describeTransportError(err, secrets, asWritten);
  // The `auto` fallback wraps the probe's error (initialize refused, then server/discover failed).
  const status = httpStatusOf(err) ?? httpStatusOf((err as Error | undefined)?.cause);
  // A refusal after initialize (a forgotten session, or none given) says what to do itself: the url
  // answered its initialize, so not "check its path".
  if (status !== undefined && !(err instanceof RefusedAfterInitializeError)) {
    if (status === 401 && auth !== "oauth") text += unauthorizedHint(name, authorization);
    text += wrongEndpointHint(status, kind, rendered?.url) || redirectHint(name, text, kind);
  } else if (rendered?.url !== undefined) {
    text +=
      tlsHint(name, text, rendered, err, written) ||
      blockedPortHint(name, text) ||
      // Read from the system's words as they name the host, then said as the url is written.
      (asWritten === undefined
        ? unreachableUrlHint(name, text, rendered.url)
        : scrub(asWritten(unreachableUrlHint(name, systemsWords(err), rendered.url)), secrets)) ||
      endpointOriginHint(name, text) ||
      (err instanceof SyntaxError || unexpectedContentType(err) !== undefined
        ? " — check that the url is the server's MCP endpoint"
        : "");
    text = withoutOpensslRecord(text);
  }
  text = withBlankVersionNamed(text);
  text += unsupportedVersionHint(text) || refusedVersionsHint(err);
  return new SvcError("mcp_connect", `mcp_servers.${name}: ${text}`, { cause: err });
}

/**
 * What to do about a 401 without OAuth: send credentials, or — when a credential header was sent (from
 * `headers`, or a url's user:password@) — check them, since the server refused them.
 */
export function unauthorizedHint(name: string, authorization: SentAuthorization): string {
  if (authorization.kind === "empty") {
    const { key, variables } = authorization;
    const why =
      variables.length === 0 ? "config.yaml writes it without one" : emptyVariablesNote(variables).slice(3);
    const token = isAuthorizationHeader(key);
    return ` — the ${token ? "Authorization" : key} header svc sent holds no credential (mcp_servers.${name}.headers.${key}): ${why} — set the ${token ? "token" : "key"} there`;
  }
  if (authorization.kind === "none")
    return ` — the server requires authorization: set an Authorization header under mcp_servers.${name}.headers (e.g. "Bearer \${TOKEN}"), or for an OAuth login auth: oauth in the entry, then svc mcp login ${name}`;
  if (authorization.keys.every(isAuthorizationHeader))
    return ` — the server refused the credentials svc sent (the Authorization header of mcp_servers.${name}.headers, or the url's user:password@): check that the token is valid and not expired, or set auth: oauth if the server expects an OAuth login`;
  const places = [
    ...authorization.keys.map((key) => `mcp_servers.${name}.headers.${key}`),
    ...(authorization.fromUrl ? ["the url's user:password@"] : []),
  ];
  return ` — the server refused the credentials svc sent (${places.join(", ")}): check that the key is valid and not expired, or set auth: oauth if the server expects an OAuth login`;
}

/**
 * The usual causes of a refused first request: a wrong path, or the other HTTP transport (an SSE server
 * refuses the POST of Streamable HTTP with 405, or with 404 when only its GET route exists, as in Express
 * servers; a Streamable HTTP server refuses the bare GET of SSE). `url` is the rendered url: only whether
 * its path ends in /sse is used, it is never quoted.
 */
function wrongEndpointHint(status: number, kind: "stdio" | "http" | "sse" | undefined, url?: string): string {
  if (status === 404 && kind === "http" && url !== undefined && endsInSse(url))
    return " — the url's path ends in /sse, an SSE server's stream, which takes no POST: set transport: sse (or, for a Streamable HTTP server, check the path: often /mcp)";
  if (status === 404)
    return " — no MCP endpoint at this url: check its path (often /mcp, or /sse for SSE servers)";
  if (kind === "http" && status === 405)
    return " — the url does not take POST: if the server speaks the older SSE transport, set transport: sse";
  if (kind === "sse" && (status === 400 || status === 405 || status === 406))
    return " — the url refused the SSE stream: if the server speaks Streamable HTTP, remove transport: sse";
  return "";
}

/**
 * A redirect the MCP SDK did not follow: one that turns the POST into a GET (301, 302, 303), or leaves the
 * url's origin (a canonical host name). The address it points to (without userinfo or query: the SDK leaves
 * them out) is usually the endpoint to write in `url`. A redirect from https to plain http is not named so:
 * the SDK says already which https address to try.
 */
function redirectHint(name: string, text: string, kind: string | undefined): string {
  const target = /Redirect to (\S+) not followed/.exec(text)?.[1];
  if (target === undefined) return "";
  // The SSE stream's GET follows a redirect of any status within the url's origin: only the origin stopped it.
  const follows =
    kind === "sse"
      ? "svc follows the SSE stream's redirect only within the url's origin (a message POST's only when it also keeps its method: 307, 308)"
      : "svc follows a redirect only when it keeps the request's method (307, 308) and the url's origin";
  return ` — the server redirects to ${target}, and ${follows}: if that is the server's MCP endpoint, write it in mcp_servers.${name}.url`;
}

/**
 * An SSE server whose event stream names its message endpoint on another origin than `url` (a server that
 * builds it from its own host name, `localhost` for a url of `127.0.0.1`, or from a base URL set behind a
 * proxy): the MCP SDK posts only to the url's own origin, and says no more than that they differ.
 */
function endpointOriginHint(name: string, text: string): string {
  if (!/Endpoint origin does not match connection origin/.test(text)) return "";
  return ` — the server's SSE stream named its message endpoint on that origin, not on the origin of mcp_servers.${name}.url, and svc posts messages only to the url's own origin: if it is the same server, write url with that origin; else set the server's public base URL (or have it announce a relative endpoint)`;
}

function endsInSse(url: string): boolean {
  try {
    return /\/sse\/?$/i.test(new URL(url).pathname);
  } catch {
    return false;
  }
}

/** A provider that can renew a refused token and resend the request (svc's own) wraps the fetch. */
function retryingFetch(provider: OAuthClientProvider, base: FetchLike): FetchLike {
  const wrap = (provider as { authorizedFetch?: (base: FetchLike) => FetchLike }).authorizedFetch;
  return wrap === undefined ? base : wrap.call(provider, base);
}

/** The provider sends the request that ends `session` (its DELETE) without refreshing the token. */
function endsWith(provider: OAuthClientProvider, session: McpSession): void {
  const ending = provider as { sessionEnding?: () => boolean };
  if (typeof ending.sessionEnding === "function") ending.sessionEnding = () => session.isClosing;
}

function sessionExtras(options: ConnectOptions, secrets: () => readonly string[]) {
  return {
    secrets,
    ...(options.handlers === undefined ? {} : { handlers: options.handlers }),
    ...(options.onLost === undefined ? {} : { onLost: options.onLost }),
    ...(options.onStrayAnswer === undefined ? {} : { onStrayAnswer: options.onStrayAnswer }),
    ...(options.onHandshake === undefined ? {} : { onHandshake: options.onHandshake }),
    ...(options.onEraFallback === undefined ? {} : { onEraFallback: options.onEraFallback }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  };
}

/** Tokens remembered as secrets per connection: the current ones and a few replaced by refreshes. */
const REMEMBERED_TOKENS = 6;

/**
 * The provider, with the tokens it hands out added to `secrets` (the array the session and its runtime
 * scrub errors and log lines with): a server that quotes the access token it was sent in an error body
 * must not put it into lastError or the log.
 */
function hidingTokens(provider: OAuthClientProvider, secrets: string[]): OAuthClientProvider {
  const tokens = provider.tokens.bind(provider);
  const added: string[] = [];
  provider.tokens = async () => {
    const current = await tokens();
    for (const token of [current?.access_token, current?.refresh_token]) {
      if (token === undefined || token === "" || secrets.includes(token)) continue;
      secrets.push(token);
      added.push(token);
      if (added.length > REMEMBERED_TOKENS) secrets.splice(secrets.indexOf(added.shift() as string), 1);
    }
    return current;
  };
  return provider;
}

async function oauthProvider(
  name: string,
  entry: McpServerEntry,
  options: ConnectOptions,
): Promise<OAuthClientProvider> {
  if (options.oauthProviderFor === undefined) {
    throw new SvcError(
      "mcp_connect",
      `mcp_servers.${name}: auth: oauth is set but OAuth support is not available in this build — remove auth: oauth or use a static Authorization header`,
    );
  }
  return options.oauthProviderFor(name, entry, { interactive: options.interactive });
}
