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
