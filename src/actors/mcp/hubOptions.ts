import type { ActorOptions, AnyActorLogic } from "xstate";
import type { InterpolationScope } from "../../config/interpolate.js";
import type { McpServerEntry } from "../../config/sections/mcp.js";
import type { Logger } from "../../io/log.js";
import type { OAuthProviderFor, TransportFor } from "../../io/mcp/connect.js";
import type { ServerStatus } from "../../io/mcp/statusFile.js";
import type { GroupNote } from "../../io/processGroups.js";
import type { GatewaySystem } from "../system.js";
import type { ApprovalSurface } from "./approvals.js";
import type { SamplingRunner } from "./serverRequests.js";

/** What an MCP hub is built from. */
export interface HubOptions {
  readonly servers: Readonly<Record<string, McpServerEntry>>;
  /** `<profile root>/mcp-cache`. */
  readonly cacheDir: string;
  /** Re-read at every connect (the profile's `.env`, then the environment). */
  readonly scope: () => InterpolationScope;
  readonly logger: Logger;
  /** What texts sent to servers call `logger`'s log (default `the gateway's log`; a CLI command's: `svc's log`). */
  readonly logName?: string;
  readonly approvals: ApprovalSurface;
  readonly runner?: SamplingRunner;
  readonly oauthProviderFor?: OAuthProviderFor;
  /** True only for a login started from a terminal; background (re)connects are never interactive. */
  readonly interactive?: boolean;
  readonly clock?: ActorOptions<AnyActorLogic>["clock"];
  /** The Stately inspector (`svc gateway run --inspect`), for a hub outside the gateway's system. */
  readonly inspect?: ActorOptions<AnyActorLogic>["inspect"];
  /** The gateway's root system: connection actors become its supervised children (`mcp:<server>`). */
  readonly system?: GatewaySystem;
  /** What the connection actors' names start with (default `mcp:`): a named profile's hub has its own. */
  readonly actorPrefix?: string;
  /** The clock durations are measured on (tool call times, the sampling window); default one that is never set (`performance.now`). */
  readonly now?: () => number;
  readonly parentEnv?: NodeJS.ProcessEnv;
  /**
   * Where a stdio server's process group is noted while it runs (the gateway's: its next start stops the
   * servers a killed gateway left). A CLI command's hub has none.
   */
  readonly serverGroup?: (server: string) => GroupNote;
  /** Called after every status change (the gateway persists it for `svc mcp list`). */
  readonly onStatus?: (statuses: ServerStatus[]) => void;
  /** After each tool call that reached the server: its duration (metrics). */
  readonly onToolCall?: (server: string, outcome: "ok" | "error", seconds: number) => void;
  /** Replaces the entry's own transport (tests: an in-memory pair with an SDK server). */
  readonly transportFor?: TransportFor;
  /**
   * A connect given up (connect_timeout, a stop) kills its stdio server's process group at once, instead
   * of closing stdin and waiting out SIGTERM: a CLI command that gave up ends when it said it would.
   */
  readonly killGivenUp?: boolean;
  /**
   * Bounds each TCP connect and TLS handshake of a url server below its connect_timeout: a command that
   * gives up sooner (svc mcp list --timeout) leaves no handshake a hung server never answers running past it.
   */
  readonly handshakeTimeoutMs?: number;
  /**
   * The gateway's own secrets (the model's API key, webhook and subscription secrets, the web search key),
   * redacted from what servers say (log messages, stderr, progress, errors) as the entry's own credentials
   * are: a filesystem server logging a file it read could otherwise quote them into gateway.log.
   */
  readonly hiddenValues?: () => readonly string[];
  /** Aborted when the gateway's stop begins (`ServerRequestDeps.stopping`); a CLI command's hub has none. */
  readonly stopping?: AbortSignal | undefined;
}
