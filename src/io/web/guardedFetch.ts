import { lookup as dnsLookup } from "node:dns/promises";
import { request as httpRequest, type IncomingMessage, type RequestOptions } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP, type LookupFunction, type Socket } from "node:net";
import { pipeline, type Readable, Transform, type TransformCallback } from "node:stream";
import { connect as tlsConnect } from "node:tls";
import { createBrotliDecompress, createGunzip, createInflate, createInflateRaw } from "node:zlib";
import { isPublicAddress } from "../../agent/tools/web/addressPolicy.js";
import { proxyAuthorization, proxyTlsOptions } from "../outbound/dispatcher.js";
import { type ProxyChoice, proxyFor } from "../outbound/proxyChoice.js";
import { proxyError, refusedStatus } from "../outbound/proxyErrors.js";

export interface ResolvedAddress {
  readonly address: string;
  readonly family: number;
}

/** Every address a host name resolves to (all of them are checked, not only the first). */
export type Resolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

export const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export interface GuardedFetchOptions {
  /** Also fetch private, link-local and loopback addresses. */
  readonly allowPrivate: boolean;
  /** Bytes of the (decoded) body kept; reading stops there. */
  readonly maxBytes: number;
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
  readonly accept: string;
  readonly resolve?: Resolver;
  /** Which addresses count as public (tests narrow it); default: `isPublicAddress`. */
  readonly isPublic?: (address: string) => boolean;
  readonly maxRedirects?: number;
}

export type GuardedFetchResult =
  | {
      readonly ok: true;
      /** Where the body came from, after redirects. */
      readonly url: string;
      readonly status: number;
      readonly contentType: string;
      readonly body: Buffer;
      readonly truncated: boolean;
    }
  | { readonly ok: false; readonly error: string };

class Refused extends Error {}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

function refusal(host: string, address: string): Refused {
  const shown = host === address ? address : `${host} (${address})`;
  return new Refused(
    `refused: ${shown} is a private, loopback or link-local address (set tools.web.allow_private: true to allow it)`,
  );
}

/**
 * The DNS lookup the socket uses: it resolves the name once, checks every address and connects only to
 * checked ones, so a name cannot resolve to a public address for the check and a private one for the
 * connection (DNS rebinding).
 */
function checkedLookup(resolve: Resolver, allowed: (address: string) => boolean): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (addresses) => {
        const first = addresses[0];
        const blocked = addresses.find((a) => !allowed(a.address));
        if (first === undefined) callback(new Error(`${hostname}: no address found`), "", 0);
        else if (blocked !== undefined) callback(refusal(hostname, blocked.address), "", 0);
        else if (options.all) (callback as (e: null, a: readonly ResolvedAddress[]) => void)(null, addresses);
        else callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, "", 0),
    );
  };
}

/** Whether two bytes open a zlib stream (RFC 1950): compression method 8 (deflate) and the check bits. */
function zlibHeader(head: Buffer): boolean {
  const [cmf = 0, flg = 0] = head;
  return (cmf & 0x0f) === 8 && (cmf * 256 + flg) % 31 === 0;
}

/**
 * `deflate` undone: the zlib format (RFC 9110 §8.4.1.2), or, when the body does not open with a zlib header,
 * the bare deflate stream some servers send, which browsers take too. The inflater is picked on the first
 * two bytes; its output is passed on as the reader asks for it (paused while this stream's buffer is
 * full), so a small body inflating to gigabytes is not decoded ahead of the byte cap.
 */
class Inflate extends Transform {
  #inflater: Transform | undefined;
  #head = Buffer.alloc(0);

  #open(): Transform {
    const inflater = zlibHeader(this.#head) || this.#head.length < 2 ? createInflate() : createInflateRaw();
    inflater.on("data", (chunk: Buffer) => {
      if (!this.push(chunk)) inflater.pause();
    });
    inflater.on("error", (err) => this.destroy(err));
    this.#inflater = inflater;
    return inflater;
  }

  #write(inflater: Transform, chunk: Buffer, callback: TransformCallback) {
    if (inflater.write(chunk)) callback();
    else inflater.once("drain", () => callback());
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
    if (this.#inflater !== undefined) return this.#write(this.#inflater, chunk, callback);
    this.#head = Buffer.concat([this.#head, chunk]);
    if (this.#head.length < 2) return callback();
    this.#write(this.#open(), this.#head, callback);
  }

  override _flush(callback: TransformCallback) {
    const inflater = this.#inflater ?? this.#open();
    if (this.#head.length < 2) inflater.write(this.#head);
    inflater.once("end", () => callback());
    inflater.end();
  }

  override _read(size: number) {
    this.#inflater?.resume();
    super._read(size);
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void) {
    this.#inflater?.destroy();
    callback(err);
  }
}

function decoder(coding: string): Transform | undefined {
  if (coding === "gzip" || coding === "x-gzip") return createGunzip();
  if (coding === "deflate") return new Inflate();
  if (coding === "br") return createBrotliDecompress();
  return undefined;
}

/** A Content-Encoding svc cannot undo: its compressed bytes would be read as the page's text. */
class UnknownEncoding extends Error {}

/** At most this many codings of one response are undone, as curl undoes at most five. */
const MAX_CODINGS = 5;

/**
 * A Content-Encoding stacking more codings than `MAX_CODINGS`: thousands of gzip layers over a small body
 * cost minutes of CPU to undo (each layer's decoder reads its input once more), past the fetch's timeout.
 */
class TooManyCodings extends Error {}

/**
 * The body, decoded: the codings of `Content-Encoding` (`gzip, br` — listed in the order applied) undone
 * last first, `identity` skipped. `pipeline`, not `pipe`: a response cut off mid-body (the timeout or the
 * run's end aborting the request, the server closing) must end the decoders with an error, or reading
 * would wait for their end forever.
 */
function decoded(response: IncomingMessage): NodeJS.ReadableStream {
  const codings = String(response.headers["content-encoding"] ?? "")
    .toLowerCase()
    .split(",")
    .map((coding) => coding.trim())
    .filter((coding) => coding !== "" && coding !== "identity")
    .reverse();
  // No body (204, 304, `Content-Length: 0`), nothing to decode: the decoders would fail on the empty stream,
  // an error in place of the page's status.
  const empty =
    response.statusCode === 204 || response.statusCode === 304 || response.headers["content-length"] === "0";
  if (codings.length === 0 || empty) return response;
  if (codings.length > MAX_CODINGS) throw new TooManyCodings(String(codings.length));
  const decoders: Transform[] = [];
  for (const coding of codings) {
    const decode = decoder(coding);
    if (decode === undefined) throw new UnknownEncoding(coding);
    decoders.push(decode);
  }
  pipeline([response, ...decoders], () => {
    // Errors reach the reader through the last decoder.
  });
  return decoders[decoders.length - 1] as Transform;
}

async function readCapped(response: IncomingMessage, maxBytes: number, signal: AbortSignal) {
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  let stream: NodeJS.ReadableStream;
  try {
    stream = decoded(response);
  } catch (err) {
    response.destroy();
    throw err;
  }
  // The timeout (or the run's end) stops the decoding too: once the body is all received, aborting the
  // request alone ends nothing, and the decoders went on.
  const stop = () => (stream as Readable).destroy?.(new Error("aborted"));
  signal.addEventListener("abort", stop, { once: true });
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      if (signal.aborted) throw new Error("aborted");
      if (size + chunk.length > maxBytes) {
        chunks.push(chunk.subarray(0, maxBytes - size));
        size = maxBytes;
        truncated = true;
        break;
      }
      chunks.push(chunk);
      size += chunk.length;
    }
  } finally {
    signal.removeEventListener("abort", stop);
    response.destroy();
  }
  return { body: Buffer.concat(chunks), truncated };
}

function get(url: URL, options: GuardedFetchOptions, signal: AbortSignal): Promise<IncomingMessage> {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const allowed = options.allowPrivate ? () => true : (options.isPublic ?? isPublicAddress);
  if (isIP(host) !== 0 && !allowed(host)) {
    return Promise.reject(refusal(host, host));
  }
  const send = url.protocol === "https:" ? httpsRequest : httpRequest;
  const requestOptions: RequestOptions = {
    method: "GET",
    headers: {
      accept: options.accept,
      "accept-encoding": "gzip, deflate, br",
      "user-agent": "svc-agent/1 (web_extract)",
    },
    lookup: checkedLookup(options.resolve ?? systemResolver, allowed),
    // A fresh connection per request: a pooled socket would skip the address check of this request.
    agent: false,
    signal,
  };
  const proxy = proxyFor(url);
  if (proxy !== undefined) return viaProxy(url, proxy, requestOptions, send, !options.allowPrivate);
  return new Promise((resolve, reject) => {
    const req = send(url, requestOptions, resolve);
    req.on("error", reject);
    req.end();
  });
}

/**
 * The GET through the outbound proxy (io/outbound/). The proxy connects, so the address check runs
 * before: the name is resolved here and every address checked as for a direct request (the proxy resolves
 * it again for its connection; `checked` false with allow_private, which refuses nothing). An https URL
 * goes through a CONNECT tunnel, its TLS verified here against the host's name; an http URL is forwarded
 * by an http:// proxy and tunnelled through an https:// one. A fresh connection to the proxy per request.
 */
async function viaProxy(
  url: URL,
  proxy: ProxyChoice,
  options: RequestOptions,
  send: typeof httpRequest,
  checked: boolean,
): Promise<IncomingMessage> {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  // With allow_private nothing is refused: the name is left to the proxy (it may be the only one that can
  // resolve it).
  if (checked && isIP(host) === 0)
    await new Promise<void>((resolve, reject) =>
      (options.lookup as LookupFunction)(host, { all: true }, (err) => (err ? reject(err) : resolve())),
    );
  const sendToProxy = proxy.url.protocol === "https:" ? httpsRequest : httpRequest;
  const authorization = proxyAuthorization(proxy);
  const proxyHost = proxy.url.hostname.replace(/^\[|\]$/g, "");
  const at = {
    host: proxyHost,
    port: Number(proxy.url.port) || (proxy.url.protocol === "https:" ? 443 : 80),
    agent: false as const,
    // TLS with an https:// proxy is verified against the proxy's name, not the Host header's (node's
    // default); an IP address is sent as no name (SNI takes none) and checked as the host.
    ...(proxy.url.protocol === "https:" ? { servername: isIP(proxyHost) === 0 ? proxyHost : "" } : {}),
    ...proxyTlsOptions(proxy),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  };
  const failed = (err: Error) => proxyError(proxy, url.origin, err);
  const { lookup: _checked, ...rest } = options;
  // Forwarded by an http:// proxy; through an https:// one, tunnelled as undici does.
  if (url.protocol === "http:" && proxy.url.protocol === "http:")
    return new Promise((resolve, reject) => {
      const req = sendToProxy(
        {
          ...rest,
          ...at,
          path: url.href,
          headers: {
            ...(rest.headers as Record<string, string>),
            host: url.host,
            ...(authorization === undefined ? {} : { "proxy-authorization": authorization }),
          },
        },
        (response) => {
          if (response.statusCode !== 407) return resolve(response);
          response.destroy();
          reject(refusedStatus(proxy, 407, url.origin));
        },
      );
      req.on("error", (err) => reject(failed(err)));
      req.end();
    });
  const port = Number(url.port) || (url.protocol === "https:" ? 443 : 80);
  const tunnel = await new Promise<Socket>((resolve, reject) => {
    const req = sendToProxy({
      ...at,
      method: "CONNECT",
      path: `${url.hostname}:${port}`,
      headers: {
        host: `${url.hostname}:${port}`,
        ...(authorization === undefined ? {} : { "proxy-authorization": authorization }),
      },
    });
    req.on("connect", (response: IncomingMessage, socket: Socket) => {
      if (response.statusCode === 200) return resolve(socket);
      socket.destroy();
      reject(refusedStatus(proxy, response.statusCode ?? 0, url.origin));
    });
    req.on("response", (response: IncomingMessage) => {
      response.destroy();
      reject(refusedStatus(proxy, response.statusCode ?? 0, url.origin));
    });
    req.on("error", (err) => reject(failed(err)));
    req.end();
  });
  return new Promise((resolve, reject) => {
    const req = send(
      url,
      {
        ...rest,
        agent: undefined,
        createConnection: () =>
          url.protocol === "http:"
            ? tunnel
            : tlsConnect({ socket: tunnel, host, ...(isIP(host) === 0 ? { servername: host } : {}) }),
      },
      resolve,
    );
    req.on("error", (err) => {
      tunnel.destroy();
      reject(err);
    });
    req.end();
  });
}

/**
 * GET an http(s) URL from the agent's side: private, loopback and link-local addresses refused (checked
 * on every resolved address and again on every redirect), a timeout, and at most `maxBytes` read.
 */
export async function guardedFetch(
  target: string,
  options: GuardedFetchOptions,
): Promise<GuardedFetchResult> {
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), options.timeoutMs);
  const signal = AbortSignal.any([options.signal, deadline.signal]);
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    clearTimeout(timer);
    return { ok: false, error: `not a URL: ${target.slice(0, 200)}` };
  }
  try {
    for (let hop = 0; ; hop++) {
      if (url.protocol !== "http:" && url.protocol !== "https:") {
        return { ok: false, error: `only http and https URLs can be fetched, not ${url.protocol}` };
      }
      const response = await get(url, options, signal);
      const status = response.statusCode ?? 0;
      const location = response.headers.location;
      if (REDIRECTS.has(status) && location === undefined) {
        // Its body ("Moved Permanently") is no page: read as one, the model would take it for the content.
        response.destroy();
        return { ok: false, error: `HTTP ${status} from ${url.href}: a redirect without a Location header` };
      }
      if (REDIRECTS.has(status) && location !== undefined) {
        response.destroy();
        const next = URL.canParse(location, url.href) ? new URL(location, url) : undefined;
        if (next === undefined)
          return {
            ok: false,
            error: `HTTP ${status} from ${url.href}: a redirect to ${JSON.stringify(location.slice(0, 200))}, which is not a URL`,
          };
        const most = options.maxRedirects ?? 5;
        if (hop >= most)
          return {
            ok: false,
            error: `too many redirects: more than ${most}, the last from ${url.href} to ${next.href}`,
          };
        url = next;
        continue;
      }
      const { body, truncated } = await readCapped(response, options.maxBytes, signal);
      return {
        ok: true,
        url: url.href,
        status,
        contentType: String(response.headers["content-type"] ?? ""),
        body,
        truncated,
      };
    }
  } catch (err) {
    if (err instanceof Refused) return { ok: false, error: err.message };
    if (err instanceof UnknownEncoding)
      return {
        ok: false,
        error: `${url.href} is sent with Content-Encoding "${err.message}", which svc cannot decode`,
      };
    if (err instanceof TooManyCodings)
      return {
        ok: false,
        error: `${url.href} is sent with ${err.message} codings stacked in its Content-Encoding; svc undoes at most ${MAX_CODINGS}`,
      };
    if (deadline.signal.aborted) return { ok: false, error: `timed out after ${options.timeoutMs / 1000} s` };
    if (options.signal.aborted) return { ok: false, error: "canceled: the run ended" };
    const cause = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    return { ok: false, error: `fetch of ${url.host} failed: ${cause}` };
  } finally {
    clearTimeout(timer);
  }
}
