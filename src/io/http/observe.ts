import { decodedBodyOf } from "../../streams/contentCoding.js";
import { answeredDeliveryId, errorOutcome, type Outcome } from "../../streams/types.js";
import type { Logger } from "../log.js";
import {
  type BodySource,
  endpointOf,
  framingRefusal,
  NOT_FOUND,
  type RequestHandler,
  type RequestHead,
} from "./core.js";
import { fromLocalScraper } from "./localScraper.js";

/** What the metrics module counts per answered request (implemented in src/io/metrics/). */
export interface RequestMetrics {
  /** `route` is a configured route's name or a fixed label: never a name taken from an unknown path. */
  answered(route: string, status: number, outcome: string | undefined, seconds: number): void;
  /** The exposition text, for `GET /metrics`. */
  render(): Promise<{ contentType: string; text: string }>;
}

export interface ObserveOptions {
  readonly logger: Logger;
  /** Milliseconds on a clock that is never set (`Clock.elapsed`): what a request's time is measured on. */
  readonly now: () => number;
  readonly multiplexProfiles: () => boolean;
  /** `platforms.webhook.access_log`, read per request so a reload applies. */
  readonly accessLog: () => boolean;
  /**
   * Whether the server may refuse a request after handing its head over (node:http: a body that stalls
   * past its deadline, a chunked body it cannot frame), so each head's time is kept to time that refusal.
   * uWS never does: keeping a time per request (a `WeakMap` entry, ~0.4 µs with its collection) is skipped.
   */
  readonly refusesAfterHead?: boolean;
  /**
   * Whether the answer came from route `name`, asked for under `profile` (a `/p/<profile>/` path's, else
   * undefined): an unknown one, or one another profile's path names, is counted as `(unknown)`, so a sender
   * cannot add label values or history rows by inventing paths. Called after the answer: no second lookup
   * on the hot path.
   */
  readonly isRoute: (name: string, status: number, profile: string | undefined) => boolean;
  /** Counted and served at `GET /metrics` when given. */
  readonly metrics?: RequestMetrics | undefined;
  /**
   * `GET /metrics` is served only to this machine's scrapers (`fromLocalScraper`), others answered as an
   * unknown path (404): with `platforms.webhook.metrics` unset, served because the bind is loopback.
   */
  readonly metricsLocalOnly?: boolean;
  /**
   * Each answered request to a served route, with its body when one was read (delivery history). With it
   * set, the body source is wrapped to keep the body; nothing is written here.
   */
  readonly onRouteRequest?:
    | ((
        route: string,
        head: RequestHead,
        body: Buffer | undefined,
        answer: Outcome,
        /** Why the pipeline refused the request (a 401's reason), when it said. */
        refusal?: string,
      ) => void)
    | undefined;
}

const METRICS_METHOD_NOT_ALLOWED: Outcome = {
  ...errorOutcome(405, "Method not allowed"),
  headers: { Allow: "GET, HEAD" },
};

/** Printable ASCII, at most 200 characters: a header or path segment in a log line never spans lines. */
function shown(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, "?").slice(0, 200);
}

/**
 * The request handler with `GET /metrics`, per-request counters and the optional access log around it.
 * With neither metrics nor the access log it is the handler itself: nothing is added to the hot path.
 */
export function observeRequests(handler: RequestHandler, options: ObserveOptions): RequestHandler {
  const { metrics, logger, now } = options;
  // The route name each path already seen to name a served route spells (under the multiplexing it was
  // read with): one Map lookup per request instead of parsing the path again. Only served routes are kept,
  // so a sender inventing paths adds nothing. Whether the name is still a route is asked every time: a
  // reload that removes the route (or turns multiplexing off) makes its path `(unknown)` again, not a
  // 404 counted, and kept in the delivery history, under a route that no longer exists.
  const knownPaths = new Map<
    string,
    { readonly name: string; readonly profile: string | undefined; readonly multiplex: boolean }
  >();
  const routeLabel = (path: string, status: number): string => {
    const multiplex = options.multiplexProfiles();
    const known = knownPaths.get(path);
    if (
      known !== undefined &&
      known.multiplex === multiplex &&
      options.isRoute(known.name, status, known.profile)
    )
      return known.name;
    const endpoint = endpointOf(path, multiplex);
    if (endpoint.kind === "health") return "(health)";
    if (endpoint.kind !== "webhook" || !options.isRoute(endpoint.routeName, status, endpoint.profile))
      return "(unknown)";
    if (known !== undefined || knownPaths.size < 1000)
      knownPaths.set(path, { name: endpoint.routeName, profile: endpoint.profile, multiplex });
    return endpoint.routeName;
  };
  /** The access log's line for one answered request. */
  const logAccess = (head: RequestHead, answer: Outcome, seconds: number) => {
    const endpoint = endpointOf(head.path, options.multiplexProfiles());
    const name = endpoint.kind === "webhook" ? endpoint.routeName : undefined;
    const id = answeredDeliveryId(answer, head.headers);
    const route = name === undefined ? shown(head.path) : shown(name);
    const ms = Math.round(seconds * 1000);
    logger.info(
      { route, status: answer.status, delivery_id: id === undefined ? null : shown(id), ms },
      `[access] ${head.method} ${route} ${answer.status} ${id === undefined ? "-" : shown(id)} ${ms}ms`,
    );
  };
  // When each request handed to the handler came in: a refusal of its body later (node:http's 408 for a
  // body that came too slowly, a chunked body it could not frame) is timed from its head, as answers are.
  const headsAt = new WeakMap<RequestHead, number>();
  const observed: RequestHandler = (head, body, reply) => {
    if (metrics !== undefined && head.path === "/metrics") {
      const started = now();
      const answer = (outcome: Outcome) => {
        if (options.accessLog()) logAccess(head, outcome, (now() - started) / 1000);
        reply(outcome);
      };
      // Refused as on every other path (headAnswer), its connection closed: where such a request ends is in
      // doubt, so no byte after it may be served.
      const refused = framingRefusal(head);
      if (refused !== undefined) {
        if (options.accessLog()) logAccess(head, refused.outcome, (now() - started) / 1000);
        return reply(refused.outcome, refused.close);
      }
      // Not served to this request: answered as any unknown path is, whatever the method, so neither
      // the body nor a 405's Allow tells a web page or a proxied client that /metrics is there.
      if (options.metricsLocalOnly === true && !fromLocalScraper(head.headers, head.targetHost))
        return answer(NOT_FOUND);
      if (head.method !== "GET" && head.method !== "HEAD") return answer(METRICS_METHOD_NOT_ALLOWED);
      metrics.render().then(
        ({ contentType, text }) => answer({ status: 200, body: {}, text: { contentType, body: text } }),
        (err: unknown) => {
          logger.error({ err: String(err) }, "[metrics] rendering failed");
          answer(errorOutcome(500, "Internal error"));
        },
      );
      return;
    }
    const log = options.accessLog();
    const onRouteRequest = options.onRouteRequest;
    if (metrics === undefined && !log && onRouteRequest === undefined) return handler(head, body, reply);
    const started = now();
    if (options.refusesAfterHead === true) headsAt.set(head, started);
    let received: Buffer | undefined;
    const source: BodySource =
      onRouteRequest === undefined
        ? body
        : {
            read: (limit, done) =>
              body.read(limit, (b) => {
                if (typeof b !== "string") received = b;
                done(b);
              }),
          };
    handler(head, source, (answer, close, refusal) => {
      const seconds = (now() - started) / 1000;
      const label =
        metrics !== undefined || onRouteRequest !== undefined ? routeLabel(head.path, answer.status) : "";
      if (metrics !== undefined)
        metrics.answered(label, answer.status, (answer.body as { status?: string }).status, seconds);
      if (onRouteRequest !== undefined && !label.startsWith("("))
        onRouteRequest(label, head, read(received), answer, refusal);
      if (log) logAccess(head, answer, seconds);
      reply(answer, close);
    });
  };
  // A request the HTTP server refused itself (node:http's 417 for an unknown Expect, a body it could not
  // frame or that came too slowly) is counted, logged and, when its head names a served route, kept in
  // the delivery history like any answer of that route: a sender's failed delivery shows there too.
  observed.refused = (answer, head = UNREAD) => {
    const onRouteRequest = options.onRouteRequest;
    // A head refused at once (an unknown Expect) or never read took no time; one handed over took until now.
    const at = headsAt.get(head);
    const seconds = at === undefined ? 0 : (now() - at) / 1000;
    if (metrics === undefined && onRouteRequest === undefined) {
      if (options.accessLog()) logAccess(head, answer, seconds);
      return;
    }
    const label = routeLabel(head.path, answer.status);
    metrics?.answered(label, answer.status, undefined, seconds);
    if (onRouteRequest !== undefined && !label.startsWith("("))
      onRouteRequest(label, head, undefined, answer);
    if (options.accessLog()) logAccess(head, answer, seconds);
  };
  return observed;
}

/**
 * The body as the route read it: a compressed one decoded (the pipeline undoes its `Content-Encoding` once
 * the rate limit let it through), so the delivery history keeps the JSON, not the gzip bytes.
 */
const read = (received: Buffer | undefined): Buffer | undefined =>
  received === undefined ? undefined : (decodedBodyOf(received) ?? received);

/** A refused request whose head was not read: `-` for its method and path in the access log. */
const UNREAD: RequestHead = { method: "-", path: "-", headers: {} };
