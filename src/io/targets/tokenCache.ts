import type { PlatformClient } from "./client.js";
import { refused } from "./httpJson.js";

export interface IssuedToken {
  readonly token: string;
  readonly expiresInSeconds: number;
}

export interface TokenCache {
  get(signal?: AbortSignal): Promise<string>;
  /** Forgets the token (the platform said it expired). */
  invalidate(): void;
}

/** Caches an app access token until shortly before it expires; concurrent callers share one fetch. */
export function tokenCache(
  fetchToken: (signal?: AbortSignal) => Promise<IssuedToken>,
  now: () => number = Date.now,
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
    invalidate() {
      cached = undefined;
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
  /** Picks the token and its lifetime (seconds) out of the answer; `error` explains a refusal. */
  read(body: Record<string, unknown>): { token?: unknown; expiresIn?: unknown; error?: string };
}

/** A cached app access token fetched from the platform's token endpoint (DingTalk, Feishu, QQ, WeCom, Weixin). */
export function appTokens(api: PlatformClient, endpoint: TokenEndpoint, now?: () => number): TokenCache {
  return tokenCache(async (signal) => {
    const { json } = endpoint;
    const answer = await api.call(endpoint.action, endpoint.method, endpoint.path, {
      ...(json === undefined ? {} : { json }),
      signal,
    });
    const { token, expiresIn, error } = endpoint.read((answer.body ?? {}) as Record<string, unknown>);
    if (typeof token !== "string" || token === "") {
      throw refused(endpoint.platform, endpoint.action, error ?? answer.text, [endpoint.secret]);
    }
    return { token, expiresInSeconds: Number(expiresIn ?? 7200) || 7200 };
  }, now);
}
