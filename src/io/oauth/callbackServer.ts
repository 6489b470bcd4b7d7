import { timingSafeEqual } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { redirectUriProblem } from "../../config/redirectUri.js";
import { SvcError } from "../../errors.js";
import { redactedExcerpt } from "./redact.js";
import { repeatedParameter } from "./repeatedParameter.js";

/** Ports a client metadata document declares: both loopback hosts for each. */
export const PINNED_PORTS = [27890, 27891, 27892, 27893, 27894] as const;
export const CALLBACK_PATH = "/callback";

/** The ten redirect URIs a self-hosted client metadata document must declare. */
export function pinnedRedirectUris(): string[] {
  return PINNED_PORTS.flatMap((p) => [
    `http://127.0.0.1:${p}${CALLBACK_PATH}`,
    `http://localhost:${p}${CALLBACK_PATH}`,
  ]);
}

/** The authorization server redirected back an error (RFC 6749 4.1.2.1) instead of a code. */
export class AuthorizationRefusedError extends SvcError {
  constructor(
    /** The redirect's `error` code (`access_denied`, `invalid_scope`, ...). */
    readonly oauthError: string,
    message: string,
    /** The redirect's `iss` (RFC 9207), checked as a code's is: an error is credited to its issuer only. */
    readonly iss: string | undefined,
  ) {
    super("oauth", message);
  }
}

export interface CallbackResult {
  readonly code: string;
  readonly iss?: string;
}

/** A loopback listener holding its port from the moment it was chosen until the redirect arrives. */
export interface CallbackServer {
  readonly port: number;
  /** The exact redirect URI registered for this login. */
  readonly redirectUri: string;
  readonly pinned: boolean;
  /** Resolves with the code once a redirect carrying `state` arrives; rejects on an error redirect. */
  waitForCode(state: string): Promise<CallbackResult>;
  close(): Promise<void>;
}

function listen(server: Server, port: number, host: string): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      server.off("listening", onListening);
      if (err.code === "EADDRINUSE" || err.code === "EACCES") resolve(undefined);
      else reject(err);
    };
    const onListening = () => {
      server.off("error", onError);
      resolve((server.address() as AddressInfo).port);
    };
    server.once("error", onError);
    server.once("listening", onListening);
    server.listen({ port, host, exclusive: true });
  });
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

const PAGE = (text: string) =>
  `<!doctype html><meta charset="utf-8"><title>svc login</title><p>${text}</p><p>You can close this window.</p>\n`;

export interface BindOptions {
  /** Try 27890–27894 first (flows that could use a client metadata document). */
  readonly pinned: boolean;
  /** Fixed port from `oauth.redirect_port` or `oauth.redirect_uri`. */
  readonly port?: number;
  /** Fixed redirect URI (`oauth.redirect_uri`): its host and path are the ones accepted. */
  readonly redirectUri?: string;
  /** Port of the stored registration's callback: tried first, a random port when it is busy. */
  readonly preferredPort?: number;
  readonly host?: string;
}

/**
 * `oauth.redirect_uri` as a URL the listener can serve: http on a loopback host (RFC 8252 7.3), since
 * the listener binds loopback only and a redirect elsewhere would never reach it.
 */
export function parseRedirectUri(raw: string): URL {
  const problem = redirectUriProblem(raw);
  if (problem !== undefined) {
    const shown = problem.startsWith("is not a URL") ? JSON.stringify(raw) : raw;
    throw new SvcError("oauth", `oauth.redirect_uri ${shown} ${problem}`);
  }
  return new URL(raw);
}

/** The port a redirect URI names, `:80` included, which `URL` drops as http's default. */
function namedPort(raw: string, url: URL): number | undefined {
  if (url.port !== "") return Number(url.port);
  return /^http:\/\/[^/?#]*:0*80(?=[/?#]|$)/i.test(raw.trim()) ? 80 : undefined;
}

/**
 * Binds the callback listener on loopback. Pinned: the first free port of 27890–27894, else a random
 * port. Requests are accepted only on the exact path, with Host `127.0.0.1:<port>` or `localhost:<port>`.
 */
export async function bindCallbackServer(options: BindOptions): Promise<CallbackServer> {
  const fixed = options.redirectUri !== undefined ? parseRedirectUri(options.redirectUri) : undefined;
  const fixedPort = fixed === undefined ? undefined : namedPort(options.redirectUri as string, fixed);
  // The listener and the redirect URI sent to the server must name the same port, or the redirect
  // goes nowhere and the login only ends at its five-minute timeout.
  if (fixedPort !== undefined && options.port !== undefined && fixedPort !== options.port) {
    throw new SvcError(
      "oauth",
      `oauth.redirect_uri ${options.redirectUri} names port ${fixedPort} but oauth.redirect_port is ${options.port} — set only one of them`,
    );
  }
  const path = fixed?.pathname ?? CALLBACK_PATH;
  // RFC 8252 7.3 allows either loopback literal; listen where the configured redirect points.
  const ipv6 = fixed?.hostname === "[::1]";
  const bindHost = options.host ?? (ipv6 ? "::1" : "127.0.0.1");
  let waiter: { state: string; resolve: (r: CallbackResult) => void; reject: (e: Error) => void } | undefined;
  let port = 0;
  const server = createServer((req, res) => {
    let url: URL;
    try {
      url = new URL(req.url ?? "/", "http://placeholder");
    } catch {
      // An absolute-form target Node's parser lets through (`GET http://[ HTTP/1.1`).
      res.writeHead(400, { "content-type": "text/plain" }).end("bad request\n");
      return;
    }
    // A browser leaves port 80 out of Host, as of any URL on a scheme's default port.
    const host = req.headers.host ?? "";
    const authority = port === 80 && !host.endsWith(":80") ? `${host}:80` : host;
    if (
      req.method !== "GET" ||
      url.pathname !== path ||
      (authority !== `127.0.0.1:${port}` &&
        authority !== `localhost:${port}` &&
        !(ipv6 && authority === `[::1]:${port}`))
    ) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      return;
    }
    // A redirect with several states is this login's when one of them is its state (then refused below,
    // ending the login); with none of them it is no redirect of this login, which keeps waiting.
    const current = waiter;
    const states = url.searchParams.getAll("state");
    if (current === undefined || !states.some((state) => sameSecret(state, current.state))) {
      res
        .writeHead(400, { "content-type": "text/html; charset=utf-8" })
        .end(PAGE("This login link is not the one svc is waiting for."));
      return;
    }
    waiter = undefined;
    const repeated = repeatedParameter(url.searchParams);
    if (repeated !== undefined) {
      res
        .writeHead(400, { "content-type": "text/html; charset=utf-8" })
        .end(
          PAGE(
            `The redirect carried ${repeated} more than once, so svc refused the login; the terminal says how to try again.`,
          ),
        );
      current.reject(
        new SvcError(
          "oauth",
          `authorization redirect carried ${repeated} more than once (a redirect carries each parameter once, so which value the server meant is unknown); login refused`,
        ),
      );
      return;
    }
    const error = url.searchParams.get("error");
    const code = url.searchParams.get("code");
    if (error !== null) {
      res.writeHead(400, { "content-type": "text/html; charset=utf-8" }).end(PAGE("Login was refused."));
      // The redirect's text is whoever sent it: one line (a newline could fake a line of svc's output).
      const desc = redactedExcerpt(url.searchParams.get("error_description") ?? "");
      current.reject(
        new AuthorizationRefusedError(
          error,
          `authorization server refused the login: ${redactedExcerpt(error, 100)}${desc ? ` (${desc})` : ""}`,
          url.searchParams.get("iss") ?? undefined,
        ),
      );
      return;
    }
    if (code === null || code === "") {
      res
        .writeHead(400, { "content-type": "text/html; charset=utf-8" })
        .end(PAGE("The redirect carried no code."));
      current.reject(new SvcError("oauth", "authorization redirect carried no code"));
      return;
    }
    res
      .writeHead(200, { "content-type": "text/html; charset=utf-8" })
      .end(PAGE("svc received the authorization; the terminal shows whether the login completed."));
    const iss = url.searchParams.get("iss");
    current.resolve(iss !== null ? { code, iss } : { code });
  });
  server.keepAliveTimeout = 1000;

  let pinned = false;
  const candidates: number[] = [];
  if (options.port !== undefined) candidates.push(options.port);
  else if (fixedPort !== undefined) candidates.push(fixedPort);
  else if (options.preferredPort !== undefined) candidates.push(options.preferredPort);
  else if (options.pinned) candidates.push(...PINNED_PORTS);
  for (const candidate of candidates) {
    const bound = await listen(server, candidate, bindHost);
    if (bound !== undefined) {
      port = bound;
      pinned = options.port === undefined && fixed === undefined && options.preferredPort === undefined;
      break;
    }
  }
  if (port === 0) {
    if (options.port !== undefined || fixedPort !== undefined) {
      // Starts with the key, so the login names the server entry (mcp_servers.<server>.oauth.redirect_port).
      const key =
        options.port !== undefined ? "oauth.redirect_port" : `oauth.redirect_uri ${options.redirectUri}`;
      throw new SvcError(
        "oauth",
        `${key}: callback port ${options.port ?? fixedPort} is busy — free it, or choose another port`,
      );
    }
    port = (await listen(server, 0, bindHost)) ?? 0;
  }
  const redirectUri =
    fixed === undefined
      ? `http://127.0.0.1:${port}${path}`
      : fixedPort !== undefined
        ? (options.redirectUri as string)
        : `${fixed.protocol}//${fixed.hostname}:${port}${fixed.pathname}`;
  return {
    port,
    pinned,
    redirectUri,
    waitForCode(state) {
      return new Promise((resolve, reject) => {
        waiter = { state, resolve, reject };
      });
    },
    close() {
      return new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}
