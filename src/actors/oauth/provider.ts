import { createHash } from "node:crypto";
import type { OAuthClientProvider, OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { svcPaths } from "../../config/paths.js";
import { isSvcError, SvcError } from "../../errors.js";
import { scrub } from "../../io/credentials.js";
import { silentLogger } from "../../io/log.js";
import { CALLBACK_PATH, PINNED_PORTS } from "../../io/oauth/callbackServer.js";
import { oauthEntryOf } from "../../io/oauth/settings.js";
import type { StoredTokens } from "../../io/oauth/tokenStore.js";
import { bearerParams } from "../../io/oauth/wwwAuthenticate.js";
import { startSystem } from "../system.js";
import { configuredClient } from "./clientIdentity.js";
import { type JobOptions, makeJob, type OAuthJob } from "./context.js";
import { discoverForJob } from "./discoverForJob.js";
import { jobFetches } from "./jobFetches.js";
import {
  loginCommand,
  loginFlowFor,
  NeedsLoginError,
  needsLoginError,
  RefreshUnavailableError,
  usableTokens,
} from "./refresh.js";
import { runLogin } from "./runLogin.js";

/**
 * Access tokens the server refused right after they were issued (by SHA-256, with the error that
 * refusal gives, and whether the server names another authorization server now): a later connect that
 * sends one and is refused again (the gateway's reconnects) fails at once with the same message instead
 * of refreshing, and being refused, on every attempt (a CLI-driven one logs in when the server moved). A token the
 * server accepts (its setup fixed) still serves; a new login brings a new token.
 */
const refusedWhenFresh = new Map<string, { readonly message: string; readonly moved?: string }>();
const MAX_REFUSED_FRESH = 1000;

function tokenKey(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/**
 * The server refused a token right after it was issued (or moved to another authorization server): every
 * request is refused so until the fix its message names and a new login. `loginNeeded`, as for
 * `NeedsLoginError`, lets the MCP hub fail the server at once with this message.
 */
export class FreshTokenRefusedError extends SvcError {
  readonly loginNeeded = true;
}

export interface ProviderOptions extends Partial<JobOptions> {
  /** CLI-driven connects may start a login; background reconnects never do. */
  readonly interactive: boolean;
  readonly isTTY?: boolean;
}

/**
 * The SDK auth provider for one `auth: oauth` server. It hands the transport stored tokens (refreshed
 * under the cross-process lock when they expire) and never gives the SDK the refresh token, so every
 * refresh goes through our lock and our User-Agent. Without usable tokens it logs in when interactive
 * and otherwise fails with "run `svc mcp login <server>`".
 */
export class SvcOAuthProvider implements OAuthClientProvider {
  private verifier = "";
  private lastHanded: string | undefined;
  /** Set when the server refused the token it was just sent after a refresh or login: the error to give. */
  private freshTokenRefused: string | undefined;

  constructor(
    readonly job: OAuthJob,
    private readonly options: ProviderOptions,
  ) {}

  get redirectUrl(): string {
    return `http://127.0.0.1:${PINNED_PORTS[0]}${CALLBACK_PATH}`;
  }

  get clientMetadata(): OAuthClientMetadata {
    return { client_name: this.job.entry.oauth?.client_name ?? "svc", redirect_uris: [this.redirectUrl] };
  }

  /**
   * Asked only by the SDK's own auth flow, reached after svc could not renew a refused token. With no
   * client known the SDK would register one itself (another User-Agent, a redirect URI nobody listens
   * on, from background reconnects too): a login is needed instead, which svc's own actors perform.
   */
  async clientInformation(): Promise<OAuthClientInformationMixed> {
    const known = () => configuredClient(this.job.entry.oauth ?? {})?.info ?? this.storedClientForCache();
    const client = known();
    if (client !== undefined) return client;
    const name = this.job.serverName;
    const stored = this.job.store.readClient();
    if (!this.options.interactive)
      throw needsLoginError(
        name,
        stored === undefined
          ? "the client registration is missing"
          : `the client registration is for ${stored.issuer}, not the authorization server now in use`,
        loginFlowFor(this.job, this.job.store.readTokens()),
        this.job.profile,
      );
    await this.login();
    const registered = known();
    if (registered === undefined) throw needsLoginError(name, "the client registration is missing");
    return registered;
  }

  /**
   * The stored registration, unless the cached discovery (which the SDK's auth flow uses) names another
   * authorization server: the SDK would discard it there and register a client of its own.
   */
  private storedClientForCache(): OAuthClientInformationMixed | undefined {
    const stored = this.job.store.readClient();
    const meta = this.job.store.readMetadata();
    return stored !== undefined && meta !== undefined && stored.issuer !== meta.authorizationServerUrl
      ? undefined
      : stored;
  }

  saveClientInformation(): void {
    // Registrations are made and stored by our own login actors only.
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    const meta = this.job.store.readMetadata();
    if (meta === undefined) return undefined;
    return {
      authorizationServerUrl: meta.authorizationServerUrl,
      authorizationServerMetadata: meta.authorizationServerMetadata,
      ...(meta.resourceMetadata ? { resourceMetadata: meta.resourceMetadata } : {}),
    };
  }

  /** Browser logins only: the device flow starts solely from `svc mcp login --flow device`. */
  private async login(): Promise<StoredTokens> {
    const name = this.job.serverName;
    if (loginFlowFor(this.job, this.job.store.readTokens()) === "device") {
      throw new SvcError(
        "oauth",
        `${name}: not logged in — run \`${loginCommand(name, "device", this.job.profile)}\` in a terminal`,
      );
    }
    const system = this.options.system ?? startSystem({ logger: this.job.logger });
    try {
      return await runLogin(this.job, {
        flow: "browser",
        system,
        isTTY: this.options.isTTY ?? process.stdin.isTTY === true,
      });
    } finally {
      if (this.options.system === undefined) system.shutdown();
    }
  }

  private hand(tokens: StoredTokens): OAuthTokens {
    this.lastHanded = tokens.access_token;
    const expiresIn =
      tokens.expires_at !== undefined
        ? Math.max(0, Math.floor((tokens.expires_at - this.job.now()) / 1000))
        : undefined;
    return {
      access_token: tokens.access_token,
      token_type: tokens.token_type,
      ...(expiresIn !== undefined ? { expires_in: expiresIn } : {}),
      ...(tokens.scope !== undefined ? { scope: tokens.scope } : {}),
    };
  }

  /**
   * Set by the connect: true once its session is closing. The request that ends the session (`DELETE`)
   * is best-effort and is sent with the saved token as it is, never after a refresh: a refresh at a
   * stop could rotate the refresh token while the process exits before saving the new one.
   */
  sessionEnding: () => boolean = () => false;

  async tokens(): Promise<OAuthTokens | undefined> {
    if (this.sessionEnding()) {
      const saved = this.job.store.readTokens();
      return saved === undefined ? undefined : this.hand(saved);
    }
    try {
      return this.hand(await usableTokens(this.job));
    } catch (err) {
      if (!this.options.interactive || !isSvcError(err, "oauth")) throw err;
      if (loginFlowFor(this.job, this.job.store.readTokens()) === "device") throw err;
      this.sayWhyLoginAgain(err);
      return this.hand(await this.login());
    }
  }

  /** A saved login that cannot be used any more is named before the browser login that replaces it. */
  private sayWhyLoginAgain(err: unknown): void {
    if (err instanceof NeedsLoginError && this.job.store.readTokens() !== undefined)
      this.job.print(`${this.job.serverName}: ${err.why} — logging in again`);
  }

  saveTokens(): void {
    // The SDK never holds a refresh token or a code of ours, so it has nothing to save.
  }

  /** Reached when the server refused our access token: refresh once under the lock, else log in or fail. */
  async redirectToAuthorization(): Promise<void> {
    const refusal = this.freshTokenRefused;
    this.freshTokenRefused = undefined;
    // Another refresh or login would only get another token the server refuses.
    if (refusal !== undefined) throw new FreshTokenRefusedError("oauth", refusal);
    try {
      await usableTokens(this.job, this.lastHanded !== undefined ? { rejected: this.lastHanded } : {});
      return;
    } catch (err) {
      if (
        !this.options.interactive ||
        err instanceof RefreshUnavailableError ||
        loginFlowFor(this.job, this.job.store.readTokens()) === "device"
      )
        throw err;
      this.sayWhyLoginAgain(err);
    }
    await this.login();
  }

  /**
   * Wraps the MCP transport's fetch: when the server refuses the access token we sent (HTTP 401), the
   * token is refreshed under the lock and that request sent once more with the new one, so a revoked
   * token costs the user neither a failed call nor a failed connect. A 401 is answered
   * before the server acts on the request, so sending it again cannot run a tool twice. When the
   * refresh fails, a CLI-driven connect logs in and sends it again; any other fails with why.
   */
  authorizedFetch(base: FetchLike): FetchLike {
    return async (url, init) => {
      const res = await base(url, init);
      if (this.sessionEnding()) return res;
      if (res.status === 403 || scopeRefusedAs401(res)) return this.stepUp(base, url, init, res);
      if (res.status !== 401) return res;
      // Only the outcome of this refusal may reach redirectToAuthorization.
      this.freshTokenRefused = undefined;
      const sent = /^Bearer (.+)$/i.exec(new Headers(init?.headers).get("authorization") ?? "")?.[1];
      if (sent === undefined) return res;
      const refusedBefore = refusedWhenFresh.get(tokenKey(sent));
      if (refusedBefore !== undefined) {
        if (refusedBefore.moved !== undefined && this.mayLogIn()) {
          this.job.print(`${refusedBefore.moved} — logging in there`);
          return this.logInAndSendAgain(base, url, init, res);
        }
        this.freshTokenRefused = refusedBefore.message;
        return res;
      }
      let renewed: StoredTokens;
      try {
        renewed = await usableTokens(this.job, { rejected: sent });
      } catch (err) {
        // A CLI-driven connect logs in here and sends the request again: left to the SDK, the login
        // succeeded but the connect still failed with "Unauthorized".
        if (this.canLogInAfter(err)) {
          this.sayWhyLoginAgain(err);
          return this.logInAndSendAgain(base, url, init, res);
        }
        // Said here, not left to the SDK's auth flow that follows a 401: without a discovery cache it
        // fetched the metadata itself, and could register a client, through the MCP transport (with the
        // entry's headers and another User-Agent) before it came to the same error.
        await res.body?.cancel().catch(() => undefined);
        throw err;
      }
      if (renewed.access_token === sent) return res;
      await res.body?.cancel().catch(() => undefined);
      const again = await this.sendWith(base, url, init, renewed);
      if (again.status !== 401) return again;
      const moved = await this.movedFrom(renewed);
      // Only a login at the server it names now helps; a CLI-driven connect does it here.
      if (moved !== undefined && this.mayLogIn()) {
        this.job.print(`${moved} — logging in there`);
        return this.logInAndSendAgain(base, url, init, again);
      }
      if (moved === undefined) this.recordRefused(renewed, this.refusedTooError(again, renewed));
      else this.recordRefused(renewed, `${moved} — run \`${this.loginCommand()}\``, moved);
      return again;
    };
  }

  private async logInAndSendAgain(
    base: FetchLike,
    url: Parameters<FetchLike>[0],
    init: Parameters<FetchLike>[1],
    refused: Response,
  ): Promise<Response> {
    await refused.body?.cancel().catch(() => undefined);
    const renewed = await this.login();
    const again = await this.sendWith(base, url, init, renewed);
    if (again.status === 401) this.recordRefused(renewed, this.refusedTooError(again, renewed));
    return again;
  }

  private recordRefused(tokens: StoredTokens, message: string, moved?: string): void {
    this.freshTokenRefused = message;
    if (refusedWhenFresh.size >= MAX_REFUSED_FRESH) refusedWhenFresh.clear();
    refusedWhenFresh.set(tokenKey(tokens.access_token), {
      message,
      ...(moved !== undefined ? { moved } : {}),
    });
  }

  private sendWith(
    base: FetchLike,
    url: Parameters<FetchLike>[0],
    init: Parameters<FetchLike>[1],
    tokens: StoredTokens,
  ): Promise<Response> {
    this.lastHanded = tokens.access_token;
    const headers = new Headers(init?.headers);
    headers.set("authorization", `Bearer ${tokens.access_token}`);
    return base(url, { ...init, headers });
  }

  /**
   * When the server refused a token right after it was issued, discovery runs once more (on this failure
   * path only): a server that moved to another authorization server refuses every token of the one that
   * issued the saved login, which the cached discovery still names, so the refresh went there. What
   * happened, naming both, or undefined when the server still names the issuer (or discovery fails).
   */
  private async movedFrom(renewed: StoredTokens): Promise<string | undefined> {
    const issuer = renewed.issuer as string | undefined;
    if (issuer === undefined) return undefined;
    const flow = renewed.flow === "device" ? "device" : "browser";
    const fetches = jobFetches(this.job, this.job.entry.oauth?.user_agent);
    const now = await discoverForJob(this.job, flow, fetches).then(
      (m) => m.authorizationServerUrl,
      () => undefined,
    );
    return now === undefined || now === issuer
      ? undefined
      : `${this.job.serverName}: the server now names ${now} as its authorization server, not ${issuer}, which issued the saved login`;
  }

  /** `res` refused the request sent with `tokens`, newly issued: what to check. */
  private refusedTooError(res: Response, tokens: StoredTokens): string {
    const name = this.job.serverName;
    return `${name}: the server refused a newly issued access token too${refusalDetail(res, tokens)} — the authorization server may issue tokens for another resource (RFC 8707 resource indicators) or the server may not accept its tokens; check mcp_servers.${name}.url and the server's authorization setup, then run \`${this.loginCommand()}\``;
  }

  /** The login this server's tokens need: its flow (device grants need a device login) and its profile. */
  private loginCommand(): string {
    return loginCommand(
      this.job.serverName,
      loginFlowFor(this.job, this.job.store.readTokens()),
      this.job.profile,
    );
  }

  /** Whether a failed renewal may be followed by a login here: interactive, browser flow, an OAuth answer. */
  private canLogInAfter(err: unknown): boolean {
    return isSvcError(err, "oauth") && !(err instanceof RefreshUnavailableError) && this.mayLogIn();
  }

  /** A CLI-driven connect of a browser-flow server may start a login; background ones never do. */
  private mayLogIn(): boolean {
    return this.options.interactive && loginFlowFor(this.job, this.job.store.readTokens()) !== "device";
  }

  /**
   * MCP step-up authorization: 403 (or 401, `scopeRefusedAs401`) with a Bearer `insufficient_scope`
   * challenge naming a scope. The scope is recorded for the next login; a CLI-driven connect logs in
   * again at once (browser flow) and sends the request once more, anything else fails saying which login
   * grants it. A 403 is answered before the server acts, so the request cannot run twice.
   */
  private async stepUp(
    base: FetchLike,
    url: Parameters<FetchLike>[0],
    init: Parameters<FetchLike>[1],
    res: Response,
  ): Promise<Response> {
    const params = bearerParams(res.headers);
    const scope = params?.scope?.trim();
    if (params?.error !== "insufficient_scope") return res;
    const name = this.job.serverName;
    if (!scope) {
      await res.body?.cancel().catch(() => undefined);
      throw new SvcError(
        "oauth",
        `${name}: the server refused the request for lack of scope (403 insufficient_scope) without naming the scope — set mcp_servers.${name}.oauth.scope to the scopes it needs, then run \`${this.loginCommand()}\``,
      );
    }
    await this.recordRequiredScope(scope);
    const flow = loginFlowFor(this.job, this.job.store.readTokens());
    if (!this.options.interactive || flow === "device") {
      await res.body?.cancel().catch(() => undefined);
      const command = loginCommand(name, flow, this.job.profile);
      throw new SvcError(
        "oauth",
        `${name}: the server needs scope "${scope}" for this request — run \`${command}\``,
      );
    }
    await res.body?.cancel().catch(() => undefined);
    const renewed = await this.login();
    this.lastHanded = renewed.access_token;
    const headers = new Headers(init?.headers);
    headers.set("authorization", `Bearer ${renewed.access_token}`);
    const again = await base(url, { ...init, headers });
    const still = again.status === 403 || again.status === 401 ? bearerParams(again.headers) : undefined;
    if (still?.error !== "insufficient_scope") return again;
    // Another login would be refused the scope just the same.
    await again.body?.cancel().catch(() => undefined);
    throw new SvcError(
      "oauth",
      `${name}: the server still needs scope "${still.scope?.trim() || scope}" after a new login — the authorization server did not grant it; ask its operator to allow that scope for this client, then run \`${this.loginCommand()}\``,
    );
  }

  /**
   * Records a step-up scope for every later login of the server, in its discovery cache. Without a cache
   * (`<server>.meta.json` removed or damaged: a token file that has not been refreshed since) discovery runs
   * first, so the scope is not lost and the next login, here or in another process, asks for it. A discovery
   * that fails leaves it to the login, which discovers again and names what failed.
   */
  private async recordRequiredScope(scope: string): Promise<void> {
    const { job } = this;
    if (job.store.readMetadata() === undefined) {
      try {
        const fetches = jobFetches(job, job.entry.oauth?.user_agent);
        const flow = loginFlowFor(job, job.store.readTokens());
        job.store.saveMetadata(await discoverForJob(job, flow, fetches));
      } catch {
        return;
      }
    }
    job.store.requireScope(scope);
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }

  codeVerifier(): string {
    return this.verifier;
  }

  invalidateCredentials(): void {
    // Saved credentials are replaced only by a successful login (a failed grant keeps them).
  }
}

/**
 * A 401 whose challenge is `insufficient_scope` naming the scope (RFC 6750 3.1 asks for 403, some servers
 * answer 401): a step-up like the 403, since a refresh keeps the grant's scope and would be refused again.
 */
function scopeRefusedAs401(res: Response): boolean {
  if (res.status !== 401) return false;
  const params = bearerParams(res.headers);
  return params?.error === "insufficient_scope" && (params.scope?.trim() ?? "") !== "";
}

/**
 * ` (invalid_token: Token was not issued for this resource)` from a 401's Bearer challenge, or "". The
 * description is cut at 200 characters once the tokens the request was sent with are redacted from it: a
 * cut through one (a JWT is longer than that) would keep its start, which no redaction afterwards knows.
 */
function refusalDetail(res: Response, sent: StoredTokens): string {
  const params = bearerParams(res.headers);
  const description = params?.error_description;
  const why = [
    params?.error,
    description === undefined
      ? undefined
      : scrub(description, [sent.access_token, sent.refresh_token]).slice(0, 200),
  ].filter((x) => x);
  return why.length > 0 ? ` (${why.join(": ")})` : "";
}

/**
 * What the MCP hub calls for each `auth: oauth` server. `paths` selects the profile's token directory
 * (default: $SVC_HOME, default profile).
 */
export function oauthProviderFor(
  serverName: string,
  entry: unknown,
  options: ProviderOptions,
): OAuthClientProvider {
  const job = makeJob(serverName, oauthEntryOf(serverName, entry), {
    paths: options.paths ?? svcPaths(),
    logger: options.logger ?? silentLogger(),
    ...(options.print ? { print: options.print } : {}),
    ...(options.openBrowser ? { openBrowser: options.openBrowser } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
  return new SvcOAuthProvider(job, options);
}

export { needsLoginError };
