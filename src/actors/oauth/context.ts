import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { SvcPaths } from "../../config/paths.js";
import type { Logger } from "../../io/log.js";
import { createOAuthTlsFetch } from "../../io/mcp/tlsFetch.js";
import { openInBrowser } from "../../io/oauth/browser.js";
import type { OAuthServerEntry } from "../../io/oauth/settings.js";
import { TokenStore } from "../../io/oauth/tokenStore.js";
import type { GatewaySystem } from "../system.js";

/** What a login or a refresh needs about one server, plus injectable edges for tests. */
export interface OAuthJob {
  readonly serverName: string;
  /** The named profile whose tokens these are (the gateway's per-profile hub; `svc mcp login --profile`). */
  readonly profile?: string;
  readonly entry: OAuthServerEntry;
  readonly store: TokenStore;
  readonly logger: Logger;
  /** Terminal output (the authorization URL, device codes). */
  readonly print: (line: string) => void;
  /** Opens the authorization URL; default: `$BROWSER`, else the `open` package. */
  readonly openBrowser: (url: string) => Promise<void>;
  /** Base fetch for OAuth requests (the entry's TLS settings, or one a test injects); User-Agent is added on top. */
  readonly fetch?: FetchLike;
  readonly now: () => number;
  /** `svc mcp login`: ignore the stored client registration (replaced when the login succeeds). */
  readonly freshClient?: boolean;
  /** Bound on each OAuth request (default `OAUTH_REQUEST_TIMEOUT_MS`); tests shorten it. */
  readonly requestTimeoutMs?: number;
}

export interface JobOptions {
  readonly paths: SvcPaths;
  readonly logger: Logger;
  readonly print?: (line: string) => void;
  readonly openBrowser?: (url: string) => Promise<void>;
  readonly fetch?: FetchLike;
  readonly now?: () => number;
  readonly system?: GatewaySystem;
}

export function makeJob(serverName: string, entry: OAuthServerEntry, options: JobOptions): OAuthJob {
  const fetch = options.fetch ?? createOAuthTlsFetch(serverName, entry);
  return {
    serverName,
    ...(options.paths.profile === undefined ? {} : { profile: options.paths.profile }),
    entry,
    store: new TokenStore(options.paths.mcpTokens, serverName, options.paths.profile),
    logger: options.logger,
    print: options.print ?? ((line) => process.stderr.write(`${line}\n`)),
    openBrowser: options.openBrowser ?? ((url) => openInBrowser(url)),
    ...(fetch !== undefined ? { fetch } : {}),
    now: options.now ?? Date.now,
  };
}
