import { systemClock } from "../../clock.js";
import type { PlatformClient } from "./client.js";
import { refused } from "./httpJson.js";
import { credentialsNote } from "./refusedRecipient.js";
import { DeliveryError } from "./target.js";

export interface IssuedToken {
  readonly token: string;
  readonly expiresInSeconds: number;
}

export interface TokenCache {
  get(signal?: AbortSignal): Promise<string>;
  /**
   * Forgets the token (the platform said it expired). With `token`, only when that is still the cached
   * one: a send that was refused with an old token does not throw away the new one another send fetched.
   */
  invalidate(token?: string): void;
}

/**
 * Caches an app access token until shortly before it expires, its lifetime counted on `now` (milliseconds
 * on a clock that is never set, the system clock's `elapsed` by default); concurrent callers share one fetch.
 */
export function tokenCache(
  fetchToken: (signal?: AbortSignal) => Promise<IssuedToken>,
  now: () => number = systemClock.elapsed,
): TokenCache {
  let cached: { token: string; refreshAt: number } | undefined;
  let pending: Promise<string> | undefined;
  return {
    async get(signal) {
      if (cached !== undefined && now() < cached.refreshAt) return cached.token;
      pending ??= fetchToken(signal)
        .then(({ token, expiresInSeconds }) => {
          const margin = Math.min(300, expiresInSeconds / 2);
          cached = { token, refreshAt: now() + (expiresInSeconds - margin) * 1000 };
          return token;
        })
        .finally(() => {
          pending = undefined;
        });
      return pending;
    },
    invalidate(token) {
      if (token === undefined || cached?.token === token) cached = undefined;
    },
  };
}

export interface TokenEndpoint {
  readonly platform: string;
  readonly action: string;
  readonly method: "GET" | "POST";
  /** Path on the platform's base URL, or an absolute URL. */
  readonly path: string;
  readonly json?: unknown;
  /** The app secret, kept out of error messages. */
  readonly secret: string;
  /** The config keys of the app's credentials, named when the endpoint refuses them. */
  readonly credentials?: string;
  /** Picks the token and its lifetime (seconds) out of the answer; `error` explains a refusal. */
  read(body: Record<string, unknown>): TokenAnswer;
}

export interface TokenAnswer {
  readonly token?: unknown;
  readonly expiresIn?: unknown;
  readonly error?: string;
  /** The refusal says "try again later" (the platform is busy, a per-minute limit), not a wrong secret. */
  readonly tryAgain?: { readonly why: string; readonly afterSeconds?: number | undefined } | undefined;
  /** The refusal is of the app's credentials (`credentials` names them). */
  readonly credentialsRefused?: boolean;
}

/** A cached app access token fetched from the platform's token endpoint (DingTalk, Feishu, QQ, WeCom, Weixin). */
export function appTokens(api: PlatformClient, endpoint: TokenEndpoint, now?: () => number): TokenCache {
  return tokenCache(async (signal) => {
    const { json } = endpoint;
    const answer = await api.call(endpoint.action, endpoint.method, endpoint.path, {
      ...(json === undefined ? {} : { json }),
      signal,
    });
    const { token, expiresIn, error, tryAgain, credentialsRefused } = endpoint.read(
      (answer.body ?? {}) as Record<string, unknown>,
    );
    if (typeof token !== "string" || token === "") {
      const failure = refused(endpoint.platform, endpoint.action, error ?? answer.text, [endpoint.secret]);
      if (tryAgain !== undefined)
        throw new DeliveryError(`${failure.message} (${tryAgain.why})`, true, tryAgain.afterSeconds);
      if (credentialsRefused === true && endpoint.credentials !== undefined)
        throw new DeliveryError(`${failure.message}${credentialsNote(endpoint.credentials)}`, false);
      throw failure;
    }
    return { token, expiresInSeconds: Number(expiresIn ?? 7200) || 7200 };
  }, now);
}

/**
 * Sends with the cached app token. When the platform refuses the token itself (`stale`: revoked, reset
 * with the app secret, expired earlier than it said), nothing was sent: a new token is fetched and the
 * request sent once more, in any mode (a direct delivery makes one attempt, and the cached token would
 * otherwise fail every delivery until its planned refresh, up to two hours later).
 */
export async function withFreshToken<T>(
  tokens: TokenCache,
  signal: AbortSignal | undefined,
  stale: (err: unknown) => boolean,
  send: (token: string) => Promise<T>,
): Promise<T> {
  const token = await tokens.get(signal);
  try {
    return await send(token);
  } catch (err) {
    if (!stale(err)) throw err;
    tokens.invalidate(token);
    return send(await tokens.get(signal));
  }
}

/** The platform's own error code in a refused answer (`code`, or QQ's `err_code`), if any. */
export function answerCode(err: unknown): unknown {
  if (!(err instanceof DeliveryError) || typeof err.answer !== "object" || err.answer === null)
    return undefined;
  const answer = err.answer as { code?: unknown; err_code?: unknown };
  return answer.code ?? answer.err_code;
}
