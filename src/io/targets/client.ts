import type { WrittenAs } from "../../config/describe.js";
import { givenBy } from "../../config/givenValues.js";
import { type HttpAnswer, type HttpCall, httpCall, joinUrl } from "./httpJson.js";
import { DeliveryError } from "./target.js";

export interface CallOptions {
  readonly json?: unknown;
  readonly form?: Readonly<Record<string, string>>;
  readonly headers?: Readonly<Record<string, string>>;
  /** Secrets known only per call (e.g. a fresh access token). */
  readonly secrets?: readonly (string | undefined)[];
  readonly signal?: AbortSignal | undefined;
}

/** One platform's HTTP API: its base URL, timeout, auth headers and the secrets to keep out of errors. */
export interface PlatformClient {
  call(
    action: string,
    method: "GET" | "POST" | "PUT",
    pathOrUrl: string,
    options?: CallOptions,
  ): Promise<HttpAnswer>;
}

export interface ClientSettings {
  readonly baseUrl: string;
  /** config.yaml's text for `baseUrl` when a `${VAR}` gave it: errors name it so, and its host (`baseUrlOf`). */
  readonly baseUrlGiven?: WrittenAs | undefined;
  readonly timeoutSeconds: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly secrets?: readonly (string | undefined)[];
  readonly throttled?: HttpCall["throttled"];
  readonly answers?: HttpCall["answers"];
  readonly credentials?: HttpCall["credentials"];
  readonly refusalNote?: HttpCall["refusalNote"];
}

/** `.`, `..` and their percent-encoded spellings, which URL parsing resolves (WHATWG URL "dot segments"). */
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;

/**
 * Whether a path svc built holds a dot segment: ids from the event (a chat or thread id) go into paths
 * percent-encoded, but encoding leaves `..` as it is, and `/channels/../messages` would call another
 * endpoint with the platform's credentials.
 */
export function hasDotSegment(path: string): boolean {
  return (path.split(/[?#]/)[0] ?? "").split("/").some((segment) => DOT_SEGMENT.test(segment));
}

/** Paths starting with `/` are joined to the base URL; absolute URLs (token endpoints) are used as they are. */
export function platformClient(platform: string, settings: ClientSettings): PlatformClient {
  return {
    call(action, method, pathOrUrl, options = {}) {
      const absolute = /^https?:\/\//.test(pathOrUrl);
      if (!absolute && hasDotSegment(pathOrUrl)) {
        return Promise.reject(
          new DeliveryError(
            `${platform}: ${action}: refused — an id in the request path is "." or "..", which would address another API endpoint; check deliver_extra.chat_id and the thread id`,
            false,
          ),
        );
      }
      const url = absolute ? pathOrUrl : joinUrl(settings.baseUrl, pathOrUrl);
      return httpCall({
        platform,
        action,
        method,
        url,
        headers: { ...settings.headers, ...options.headers },
        ...(options.json === undefined ? {} : { json: options.json }),
        ...(options.form === undefined ? {} : { form: options.form }),
        timeoutMs: settings.timeoutSeconds * 1000,
        signal: options.signal,
        secrets: [...(settings.secrets ?? []), ...(options.secrets ?? [])],
        throttled: settings.throttled,
        answers: settings.answers,
        credentials: settings.credentials,
        refusalNote: settings.refusalNote,
        ...(absolute ? {} : { baseUrlKey: `platforms.${platform}.base_url` }),
        ...(settings.baseUrlGiven === undefined
          ? {}
          : { baseUrlGiven: { base: settings.baseUrl, written: settings.baseUrlGiven } }),
      });
    },
  };
}

/**
 * A platform's `base_url` as its client takes it: the value, and config.yaml's text for it when a `${VAR}`
 * gave it (named so in every error, as is its host: `withUrlAsWritten`).
 */
export function baseUrlOf(settings: { readonly base_url?: string | undefined }): {
  readonly baseUrl: string;
  readonly baseUrlGiven: WrittenAs | undefined;
} {
  return { baseUrl: settings.base_url ?? "", baseUrlGiven: givenBy(settings, "base_url") };
}

/** Reads one string field of a JSON answer body. */
export function stringField(answer: HttpAnswer, key: string): string | undefined {
  const value = (answer.body as Record<string, unknown> | undefined)?.[key];
  return typeof value === "string" ? value : undefined;
}

/** A client for a platform that takes one static token in the Authorization header (`Bearer`, `Bot`). */
export function tokenClient(
  platform: string,
  settings: {
    readonly token?: string | undefined;
    readonly base_url?: string | undefined;
    readonly timeout_seconds: number;
  },
  scheme = "Bearer",
): PlatformClient {
  const token = settings.token ?? "";
  return platformClient(platform, {
    ...baseUrlOf(settings),
    timeoutSeconds: settings.timeout_seconds,
    headers: { authorization: `${scheme} ${token}` },
    secrets: [token],
    credentials: `platforms.${platform}.token`,
  });
}
