import { type CallToolResult, UrlElicitationRequiredError } from "@modelcontextprotocol/sdk/types.js";
import { scopedSignal, timeoutSignal } from "../../clock.js";
import { unsetVariablesIn } from "../../config/interpolate.js";
import { isTrusted } from "../../config/sections/mcp.js";
import { textWithoutUrlCredentials } from "../../config/urlCredentials.js";
import { SvcError } from "../../errors.js";
import { scrub } from "../../io/credentials.js";
import type { Logger } from "../../io/log.js";
import { ResultTooDeepError } from "../../io/mcp/resultDepth.js";
import type { McpSession } from "../../io/mcp/session.js";
import { TaskPollError } from "../../io/mcp/taskPollError.js";
import {
  describeTransportError,
  excerpt,
  httpStatusOf,
  MESSAGE_EXCERPT_CHARS,
} from "../../io/mcp/transportErrors.js";
import { connectionState } from "../../machines/mcpConnection.js";
import type { ApprovalSurface } from "./approvals.js";
import {
  answerTooLarge,
  isAnswerLost,
  isConnectionClosed,
  isRequestTimeout,
  isSessionExpired,
  isUnauthorized,
  isUnreachable,
  loginNeeded,
  notResumed,
  resumeSessionForgotten,
} from "./callErrors.js";
import { liveTool } from "./liveTool.js";
import { ensureConnected, type Runtime, RuntimeStoppedError } from "./runtime.js";
import { serverText } from "./serverLog.js";
import type { RegisteredTool } from "./toolNames.js";
import { structuredContentProblem } from "./toolSchema.js";
import { runUtilityTool } from "./utilityTools.js";

/**
 * Spec 2.1 trust rules: untrusted servers need a yes before a tool without readOnlyHint runs. `trust` is
 * the entry's value with `${VAR}` rendered (string values anywhere in an entry).
 */
export async function approveCall(
  rt: Runtime,
  approvals: ApprovalSurface,
  tool: RegisteredTool,
  args: Record<string, unknown>,
  trust: string,
  outer?: AbortSignal,
): Promise<void> {
  if (isTrusted({ trust }) || tool.readOnly) return;
  const signal = AbortSignal.any([timeoutSignal(rt.entry.timeout * 1000), ...(outer ? [outer] : [])]);
  const approved = await approvals
    .approve({ server: rt.name, tool: tool.original, args }, signal)
    .catch(() => false);
  if (!approved || signal.aborted) {
    throw new SvcError(
      "approval_denied",
      `mcp_servers.${rt.name}: calling ${JSON.stringify(tool.original)} needs approval (trust: ${trustAsWritten(rt.entry.trust)}${trustNote(rt.entry.trust, trust)}) and it was ${signal.aborted ? "not given in time" : "denied"}`,
    );
  }
}

/**
 * The entry's `trust` as config.yaml writes it, quoted as the start's warning quotes it when it is neither
 * full nor untrusted (`trust: ""`, `trust: " full "`: unquoted, an empty value or its spaces would not show);
 * a `${VAR}` alone, rendered at each call, as written (one with spaces around it, `" ${T} "`, quoted as any other).
 */
function trustAsWritten(written: string): string {
  return written === "untrusted" || written === "full" || /^\$\{[^\s{}]+\}$/.test(written)
    ? written
    : JSON.stringify(textWithoutUrlCredentials(written));
}

/**
 * Why a value that is neither full nor untrusted leaves the server untrusted, said since the value as written
 * does not show it: an empty `trust: ""`, or a `trust: ${MCP_TRUST}` that nothing set, which stands as
 * written. Only a `${...}` written there is named (a value from .env is not quoted).
 */
function trustNote(written: string, rendered: string): string {
  if (written.trim() === "")
    return ", an empty value, so the server is treated as untrusted — write trust: full or trust: untrusted";
  // A variable set to an empty value (`MCP_TRUST=` in .env) renders nothing, which is no trust either.
  const named = /\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}/.exec(written)?.[1];
  if (rendered.trim() === "" && named !== undefined)
    return `, where \${${named}} is set to an empty value, so the server is treated as untrusted — set ${named}=full or ${named}=untrusted in the profile's .env or the environment`;
  const unset = unsetVariablesIn(rendered).filter(
    (name) => written.includes(`{${name}}`) || written.includes(`{env:${name}}`),
  );
  const first = unset[0];
  if (first === undefined) return "";
  return `, where ${unset.map((name) => `\${${name}}`).join(", ")} ${unset.length === 1 ? "is" : "are"} not set, so the server is treated as untrusted — add ${first}=full or ${first}=untrusted to the profile's .env or the environment`;
}

/**
 * A call the server refused with -32042 until the user has been to a URL (the error path of URL-mode
 * elicitation). svc opens no browser (svc declines URL mode); the message names the URL so the user
 * can open it and call again. The server's message for a URL has `secrets` redacted before it is cut.
 */
function urlElicitationRequired(
  server: string,
  tool: string,
  err: UrlElicitationRequiredError,
  secrets: readonly string[],
): string {
  const urls = err.elicitations
    .map(
      (e) => `${e.url}${e.message ? ` (${excerpt(scrub(e.message, secrets), MESSAGE_EXCERPT_CHARS)})` : ""}`,
    )
    .join("; ");
  return `mcp_servers.${server}: "${tool}" needs the user to open ${urls || "a URL"} first (URL-mode elicitation; svc opens no browser) — open it, then call the tool again`;
}

/**
 * Runs the call; after a session expiry only read-only tools are replayed. `onSent` is told as each
 * request (the call, its replay) goes to the server, when its timeout starts.
 */
export async function invokeTool(
  rt: Runtime,
  logger: Logger,
  session: McpSession,
  tool: RegisteredTool,
  args: Record<string, unknown>,
  signal?: AbortSignal,
  onSent?: () => void,
): Promise<CallToolResult> {
  const timeoutMs = rt.entry.timeout * 1000;
  // The tool as the server lists it: a replay's reconnected server may list it otherwise (see below).
  let current = tool;
  const run = (s: McpSession, tool: RegisteredTool) =>
    tool.kind === "utility"
      ? // Its requests get a signal that ends with the call (see scopedSignal), as a tool call's does.
        scopedSignal(signal === undefined ? [] : [signal], (scoped) =>
          runUtilityTool(s, tool.original, args, timeoutMs, scoped),
        )
      : s.callTool(tool.original, args, timeoutMs, {
          ...(signal === undefined ? {} : { signal }),
          ...(tool.task === true ? { task: true } : {}),
          onProgress: (p) =>
            logger.debug(
              { server: rt.name, tool: tool.original, progress: p.progress, total: p.total },
              `[mcp] ${rt.name}: ${JSON.stringify(tool.original)} progress ${p.progress}${p.total === undefined ? "" : `/${p.total}`}${p.message === undefined ? "" : ` — ${serverText(p.message, rt.secrets)}`}`,
            ),
        });
  const canceled = (cause?: unknown) =>
    new SvcError(
      "mcp_call",
      `mcp_servers.${rt.name}: ${JSON.stringify(tool.original)} was canceled: the run ended before it answered; it may or may not have run`,
      cause === undefined ? undefined : { cause },
    );
  const cutOff = (cause: unknown) =>
    new SvcError(
      "mcp_call",
      `mcp_servers.${rt.name}: ${JSON.stringify(tool.original)} was cut off: the server was stopped or reloaded while the call ran; it may or may not have run`,
      { cause },
    );
  // `replay`: a read-only tool may be sent once more after a lost session; the replay's own errors are
  // reported like any call's (timeout, failure), never as a raw transport error.
  const attempt = async (s: McpSession, replay: boolean): Promise<CallToolResult> => {
    try {
      onSent?.();
      return await run(s, current);
    } catch (err) {
      // svc itself ended the connection (the gateway stopping, the entry reloaded): no replay on a
      // runtime that is going away, and a message that says what happened.
      if (connectionState(rt.actor.getSnapshot()) === "stopped") throw cutOff(err);
      // The caller gave up (the run ended: its timeout, a stop): the SDK reports any abort as a request
      // timeout, which would blame the server's own `timeout`.
      if (signal?.aborted === true) throw canceled(err);
      // The answer came and the session is well: only this result is refused.
      if (err instanceof ResultTooDeepError)
        throw new SvcError(
          "mcp_call",
          `mcp_servers.${rt.name}: ${JSON.stringify(tool.original)} failed: ${err.message}, so it is not used — a fault of the server (have the tool answer a flatter result)`,
        );
      // So is an answer too large to read: the same call would get the same answer.
      const tooLarge = answerTooLarge(err);
      if (tooLarge !== undefined)
        throw new SvcError(
          "mcp_call",
          `mcp_servers.${rt.name}: ${JSON.stringify(tool.original)} failed: ${tooLarge} — a fault of the server (have the tool answer less at once)`,
        );
      // The server created the task, and following it failed: whether it ran is not known.
      if (err instanceof TaskPollError) {
        // A poll refused for a session the server forgot (HTTP 404, as after a poll's cut stream that it could
        // not resume): a new session is started at once, as for a call refused so, not at the next request.
        const refusal = err.failure ?? err.cause;
        if (isSessionExpired(refusal))
          rt.actor.send({
            type: "SESSION_LOST",
            reason: scrub(
              `the server no longer knows the session (HTTP ${httpStatusOf(refusal) ?? 404})`,
              rt.secrets,
            ),
            immediate: true,
          });
        // A stdio server's process that died under the task: how it ended, with its last stderr lines, as for a
        // plain call whose connection was lost (the poll's own error, `Connection closed`, says nothing of it).
        const exit = s.lostUnexpectedly ? s.exitReport?.() : undefined;
        throw new SvcError(
          "outcome_uncertain",
          `mcp_servers.${rt.name}: following the task of ${JSON.stringify(tool.original)} failed (${scrub(exit ?? describeTransportError(err.cause, rt.secrets), rt.secrets)}); it may or may not have run — verify its effect before calling it again`,
          { cause: err },
        );
      }
      const expired = isSessionExpired(err);
      // The connection closed under the call: a stdio process died, or svc closed the session because it
      // was lost (a failed ping, another call's expiry) — a stop or reload was handled above.
      const lost =
        !expired && ((isConnectionClosed(err) && (s.lostUnexpectedly || s.isClosing)) || isAnswerLost(err));
      if (expired || lost) {
        rt.actor.send({
          type: "SESSION_LOST",
          reason: scrub(
            expired
              ? `the server no longer knows the session (HTTP ${httpStatusOf(err) ?? 404})`
              : resumeSessionForgotten(err)
                ? "the server no longer knows the session (HTTP 404 to the resumption of a call's cut response stream)"
                : isAnswerLost(err)
                  ? `the connection dropped before the answer to a call came (${describeTransportError(err, rt.secrets)})`
                  : "the connection closed",
            rt.secrets,
          ),
          immediate: true,
        });
        const what = expired ? "session expired" : "connection was lost";
        // stdio: how the process ended (a crash and its last stderr lines, svc's message size limit).
        // Streamable HTTP: a cut stream the server refused to resume says so.
        const exit = expired ? undefined : (s.exitReport?.() ?? notResumed(err));
        const how = exit === undefined ? "" : ` (${scrub(exit, rt.secrets)})`;
        const uncertain = (why = "") =>
          new SvcError(
            "outcome_uncertain",
            `mcp_servers.${rt.name}: the ${what} while ${JSON.stringify(tool.original)} was being called${how}${why}; it may or may not have run — verify its effect before calling it again`,
          );
        if (!tool.readOnly) throw uncertain();
        // The answer was over svc's size limit for one message: a replay would get the same answer.
        if (s.closedOverLongMessage?.() === true)
          throw new SvcError(
            "mcp_call",
            `mcp_servers.${rt.name}: ${JSON.stringify(tool.original)} failed: ${exit}`,
            {
              cause: err,
            },
          );
        if (!replay) {
          // Twice in a row is rarely chance: say what the connection ended with (a crash, a size limit).
          const why = rt.actor.getSnapshot().context.lastError;
          throw new SvcError(
            "mcp_call",
            `mcp_servers.${rt.name}: ${JSON.stringify(tool.original)} failed: the ${what} again while it was replayed${why === undefined ? "" : ` (${why})`}`,
            { cause: err },
          );
        }
        let next: McpSession;
        try {
          next = await ensureConnected(rt, signal === undefined ? undefined : { signal, giveUp: canceled });
        } catch (reconnectError) {
          if ((signal?.aborted as boolean | undefined) === true) throw reconnectError;
          if (reconnectError instanceof RuntimeStoppedError) throw cutOff(reconnectError);
          const why = (reconnectError as Error).message.replace(`mcp_servers.${rt.name}: `, "");
          throw new SvcError(
            "mcp_call",
            `mcp_servers.${rt.name}: the ${what} while ${JSON.stringify(tool.original)} was being called, and reconnecting to replay it failed: ${why}`,
            { cause: reconnectError },
          );
        }
        // The replay is judged by the listing of the reconnected server, as a call to a server not connected
        // is: one it no longer lists is not sent, nor one it no longer marks read-only.
        const live = liveTool(rt, tool, tool.original, what);
        if (!live.readOnly)
          throw uncertain(
            " (the server, reconnected, no longer marks it readOnlyHint: true, so it was not replayed)",
          );
        current = live;
        logger.info(
          { server: rt.name, tool: tool.original },
          `[mcp] ${rt.name}: ${expired ? "session expired" : "connection lost"}; replaying read-only ${JSON.stringify(tool.original)}`,
        );
        return attempt(next, false);
      }
      if (isRequestTimeout(err)) {
        throw new SvcError(
          "mcp_timeout",
          `mcp_servers.${rt.name}: ${JSON.stringify(tool.original)} did not answer within ${rt.entry.timeout} s (timeout) — if the server is slow on this tool, raise mcp_servers.${rt.name}.timeout in config.yaml; otherwise the server may be stuck: check its own log`,
        );
      }
      if (err instanceof UrlElicitationRequiredError) {
        throw new SvcError("mcp_call", urlElicitationRequired(rt.name, tool.original, err, rt.secrets), {
          cause: err,
        });
      }
      // The saved OAuth login is unusable (its refresh token or configured client refused, a newly issued token
      // refused too, a logout): every call fails so until the user logs in again, which reconnecting cannot
      // change. The server is failed at once with why, as a reconnect failing the same way leaves it (logged,
      // shown by `svc mcp list`); its retries pick up a new login.
      const noLogin = loginNeeded(err);
      if (noLogin !== undefined) rt.actor.send({ type: "LOGIN_NEEDED", reason: scrub(noLogin, rt.secrets) });
      // A 401 without OAuth: the credentials the session was opened with (a token since expired or revoked)
      // are refused now, and the session can do nothing more with them. It is reconnected, so the next
      // call sends what `.env` gives then (a rotated token), and the status says why meanwhile.
      const refused = isUnauthorized(err) ? s.unauthorizedHint : undefined;
      // A url a `${VAR}` gave is named as written before the entry's secrets are hidden (a host `.env` gave
      // is one of them), and the hint is read from the system's words as they name the host.
      const described = describeTransportError(err, rt.secrets, s.shownAsWritten);
      const unreachable = isUnreachable(err);
      const hint =
        !unreachable || s.unreachableHint === undefined
          ? ""
          : s.shownAsWritten === undefined
            ? s.unreachableHint(described)
            : scrub(s.shownAsWritten(s.unreachableHint(describeTransportError(err, []))), rt.secrets);
      const said = `${described}${refused ?? ""}${hint}`;
      const reason = s.shownAsWritten?.(said) ?? said;
      // The server went away: show it (status leaves "connected") and reconnect with the usual backoff.
      if (unreachable)
        rt.actor.send({
          type: "SESSION_LOST",
          reason: scrub(`the server is unreachable: ${reason}`, rt.secrets),
        });
      else if (refused !== undefined)
        rt.actor.send({
          type: "SESSION_LOST",
          reason: scrub(`the server refused a call: ${reason}`, rt.secrets),
        });
      throw new SvcError(
        "mcp_call",
        `mcp_servers.${rt.name}: ${JSON.stringify(tool.original)} failed: ${reason}`,
        {
          cause: err,
        },
      );
    }
  };
  const result = await attempt(session, true);
  const broken =
    current.outputSchema === undefined || result.isError === true
      ? undefined
      : structuredContentProblem(current.outputSchema, result.structuredContent);
  if (broken !== undefined)
    throw new SvcError(
      "mcp_call",
      `mcp_servers.${rt.name}: ${JSON.stringify(tool.original)} failed: its result does not match the outputSchema the server lists for it (${broken}), so it is not used — a fault of the server`,
    );
  return result;
}
