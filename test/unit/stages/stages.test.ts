import { createHmac } from "node:crypto";
import { gzipSync } from "node:zlib";
import { describe, expect, it, vi } from "vitest";
import { resolveRoute } from "../../../src/actors/routes.js";
import type { Filter } from "../../../src/config/sections/filters.js";
import type { Route } from "../../../src/config/sections/webhook.js";
import { answerText } from "../../../src/io/http/core.js";
import { decodeContent } from "../../../src/streams/contentCoding.js";
import type { AcceptedEvent, PipelineCtx, ResolvedRoute } from "../../../src/streams/context.js";
import { UNNAMED_EVENT } from "../../../src/streams/eventType.js";
import { filterRefusals } from "../../../src/streams/filters.js";
import { UNKNOWN_ROUTE } from "../../../src/streams/frontAnswers.js";
import { verifySignature } from "../../../src/streams/signatures.js";
import { acceptStage } from "../../../src/streams/stages/accept.js";
import { authStage, INVALID_SIGNATURE } from "../../../src/streams/stages/auth.js";
import { DELIVERY_FAILED, deliverStage } from "../../../src/streams/stages/deliver.js";
import { acceptedOutcome, dispatchStage } from "../../../src/streams/stages/dispatch.js";
import { eventCheckStage, NOT_AMONG_EVENTS, PING_NOT_LISTED } from "../../../src/streams/stages/events.js";
import { filterStage, IGNORED_BY_FILTER } from "../../../src/streams/stages/filters.js";
import { DUPLICATE, idempotencyStage } from "../../../src/streams/stages/idempotency.js";
import {
  INVALID_JSON,
  isForm,
  NOT_AN_OBJECT,
  NOT_UTF8,
  parseStage,
} from "../../../src/streams/stages/parse.js";
import { RATE_LIMITED, rateLimitStage } from "../../../src/streams/stages/rateLimit.js";
import { routeLookupStage } from "../../../src/streams/stages/route.js";
import { IGNORED_BY_SCRIPT, scriptStage } from "../../../src/streams/stages/script.js";
import { bodySizeStage, declaredLength, PAYLOAD_TOO_LARGE } from "../../../src/streams/stages/size.js";
import { type Inbound, isOutcome, type Outcome } from "../../../src/streams/types.js";

const baseRoute: Route = { deliver: "log", deliver_only: false, mirror_to_session: false };
const resolved = (route: Partial<Route> = {}, extra: Partial<ResolvedRoute> = {}): ResolvedRoute => ({
  name: "r",
  route: { ...baseRoute, ...route },
  secret: "sekrit",
  profile: "default",
  ...extra,
});
const inbound = (over: Partial<Inbound> = {}): Inbound => ({
  method: "POST",
  path: "/webhooks/r",
  routeName: "r",
  profile: undefined,
  headers: {},
  body: Buffer.from("{}"),
  receivedAt: 1_700_000_000_000,
  ...over,
});
const ctxWith = (over: Partial<PipelineCtx> = {}): PipelineCtx => ({
  inbound: inbound(),
  route: resolved(),
  payload: {},
  ...over,
});

describe("route lookup stage", () => {
  const lookup = (name: string) =>
    name === "r" ? resolved() : name === "w" ? resolved({}, { name: "w", profile: "work" }) : undefined;
  it("unknown route → 404 Unknown route; known → context with the route", () => {
    const stage = routeLookupStage({ lookup, multiplexProfiles: () => false });
    expect(stage({ inbound: inbound({ routeName: "x" }) })).toBe(UNKNOWN_ROUTE);
    expect(stage({ inbound: inbound() })).toMatchObject({ route: { name: "r" } });
  });
  it("with multiplexing, a profile mismatch is the same 404 as an unknown route", () => {
    const stage = routeLookupStage({ lookup, multiplexProfiles: () => true });
    expect(stage({ inbound: inbound({ routeName: "w", profile: "work" }) })).toMatchObject({
      route: { name: "w" },
    });
    expect(stage({ inbound: inbound({ routeName: "w" }) })).toBe(UNKNOWN_ROUTE);
    expect(stage({ inbound: inbound({ routeName: "r", profile: "work" }) })).toBe(UNKNOWN_ROUTE);
    expect(stage({ inbound: inbound({ routeName: "r", profile: "default" }) })).toMatchObject({
      route: { name: "r" },
    });
  });
});

describe("body size stage", () => {
  const stage = bodySizeStage({ maxBodyBytes: () => 10 });
  it("checks the declared Content-Length and the real body", () => {
    expect(stage({ inbound: inbound({ headers: { "content-length": "11" }, body: Buffer.alloc(0) }) })).toBe(
      PAYLOAD_TOO_LARGE,
    );
    expect(stage({ inbound: inbound({ body: Buffer.alloc(11) }) })).toBe(PAYLOAD_TOO_LARGE);
    expect(
      isOutcome(stage({ inbound: inbound({ headers: { "content-length": "10" }, body: Buffer.alloc(10) }) })),
    ).toBe(false);
  });
  it("a declared length of 16 digits or more is over the limit before the body is read (node:http hands it over)", () => {
    const declared = (length: string) =>
      stage({ inbound: inbound({ headers: { "content-length": length }, body: Buffer.alloc(0) }) });
    for (const length of ["1000000000000000", "18446744073709551615", "9".repeat(400)]) {
      expect(declared(length)).toBe(PAYLOAD_TOO_LARGE);
    }
    expect(declaredLength({ "content-length": "0000000000000000000000010" })).toBe(10);
    expect(isOutcome(declared("0000000000000000000000010"))).toBe(false);
  });
  it("each head's length is its own, read again or after another's (the last one read is remembered)", () => {
    const lengthOf = (length: string | undefined) =>
      declaredLength(length === undefined ? {} : { "content-length": length });
    const heads = ["10", "10", "1x", "10", "", "20", undefined, "20", "10 ", "010", "10", "-1", "20"];
    expect(heads.map(lengthOf)).toEqual([
      10,
      10,
      undefined,
      10,
      undefined,
      20,
      undefined,
      20,
      undefined,
      10,
      10,
      undefined,
      20,
    ]);
    // A malformed length asked again (a head is asked up to four times) is still none, never the last good one.
    const again = ["10", "1x", "1x", "", "", "-1", "-1", "1e3", "1e3", "7"];
    expect(again.map(lengthOf)).toEqual(again.map((raw) => (/^\d+$/.test(raw) ? Number(raw) : undefined)));
  });
});

describe("rate limit stage", () => {
  it("a route known to be spent is 429 without spending; otherwise the request spends one unit", () => {
    const asked: string[] = [];
    let spent = true;
    let left = 1;
    const deps = {
      isSpent: (name: string) => {
        asked.push(`spent? ${name}`);
        return spent;
      },
      tryAcquire: (name: string) => {
        asked.push(`spend ${name}`);
        return left-- > 0;
      },
      msUntilReset: () => 1500,
    };
    const ctx = { inbound: inbound() };
    expect(rateLimitStage(deps)(ctx)).toEqual({ ...RATE_LIMITED, headers: { "Retry-After": "2" } });
    expect(asked).toEqual(["spent? r"]);
    asked.length = 0;
    spent = false;
    expect(rateLimitStage(deps)(ctx)).toBe(ctx);
    expect(rateLimitStage(deps)(ctx)).toMatchObject({ status: 429 });
    expect(asked).toEqual(["spent? r", "spend r", "spent? r", "spend r"]);
  });
});

/** The answer a stage gave: an Outcome, or a context it finished (a refusal with its reason). */
const answerOf = (result: PipelineCtx | Outcome) => (isOutcome(result) ? result : result.outcome);

describe("auth stage (real verifySignature)", () => {
  const v1: string[] = [];
  const stage = authStage({ verify: verifySignature, onLegacyV1: (r) => v1.push(r) });
  const body = Buffer.from('{"a":1}');
  it("accepts a valid HMAC, rejects a wrong one with 401 Invalid signature", () => {
    const good = `sha256=${createHmac("sha256", "sekrit").update(body).digest("hex")}`;
    expect(
      isOutcome(stage(ctxWith({ inbound: inbound({ body, headers: { "x-hub-signature-256": good } }) }))),
    ).toBe(false);
    expect(
      answerOf(
        stage(ctxWith({ inbound: inbound({ body, headers: { "x-hub-signature-256": "sha256=00" } }) })),
      ),
    ).toBe(INVALID_SIGNATURE);
  });
  it("uses the request's receive time for timestamped schemes", () => {
    const ts = String(1_700_000_000 - 400);
    const sig = createHmac("sha256", "sekrit").update(`${ts}.`).update(body).digest("hex");
    const headers = { "x-webhook-signature-v2": sig, "x-webhook-timestamp": ts };
    expect(answerOf(stage(ctxWith({ inbound: inbound({ body, headers }) })))).toBe(INVALID_SIGNATURE);
    expect(
      isOutcome(
        stage(ctxWith({ inbound: inbound({ body, headers, receivedAt: (1_700_000_000 - 300) * 1000 }) })),
      ),
    ).toBe(false);
  });
  it("reports generic V1 successes; INSECURE_NO_AUTH skips the check", () => {
    const sig = createHmac("sha256", "sekrit").update(body).digest("hex");
    stage(ctxWith({ inbound: inbound({ body, headers: { "x-webhook-signature": sig } }) }));
    expect(v1).toEqual(["r"]);
    const open = ctxWith({ route: resolved({}, { secret: "INSECURE_NO_AUTH" }) });
    expect(stage(open)).toBe(open);
  });
  it("a refusal keeps the reason the scheme gave for the delivery history: never the secret nor a signature", () => {
    const rejected: string[] = [];
    const logged = authStage({ verify: verifySignature, onRejected: (_r, reason) => rejected.push(reason) });
    const hex = (key: string, text: string) => createHmac("sha256", key).update(text).digest("hex");
    const expected = hex("sekrit", body.toString());
    const sent = hex("other", body.toString());
    const ts = String(1_700_000_000 - 412);
    const cases: [Record<string, string>, string][] = [
      [{}, "no recognized signature or token header"],
      [{ "x-hub-signature-256": `sha256=${sent}` }, "x-hub-signature-256 does not match"],
      [{ "x-hub-signature-256": "sha1=abc" }, "x-hub-signature-256 is not sha256=<hex>"],
      [
        { "x-webhook-timestamp": ts, "x-webhook-signature-v2": hex("sekrit", `${ts}.${body}`) },
        "x-webhook-timestamp is more than 300 s from the server clock",
      ],
      [{ "x-gitlab-token": "not-the-secret" }, "token does not match"],
      [{ authorization: "Bearer not-the-secret" }, "bearer token does not match"],
    ];
    for (const [headers, reason] of cases) {
      const result = logged(ctxWith({ inbound: inbound({ body, headers }) }));
      expect(isOutcome(result)).toBe(false);
      expect(result).toMatchObject({ outcome: INVALID_SIGNATURE, refusal: reason });
    }
    // The same reason the log is given.
    expect(rejected).toEqual(cases.map(([, reason]) => reason));
    for (const secret of ["sekrit", expected, sent, "not-the-secret"])
      for (const reason of rejected) expect(reason).not.toContain(secret);
  });
  it("INSECURE_NO_AUTH refuses a request a web page made (Origin, Sec-Fetch-Site): loopback is no boundary for a browser", () => {
    const rejected: string[] = [];
    const logged = authStage({ verify: verifySignature, onRejected: (_r, reason) => rejected.push(reason) });
    const route = resolved({}, { secret: "INSECURE_NO_AUTH" });
    for (const headers of [
      { origin: "https://evil.example", "content-type": "text/plain;charset=UTF-8" },
      { origin: "http://rebound.example:8644", "sec-fetch-site": "same-origin" },
      { "sec-fetch-site": "cross-site", "sec-fetch-mode": "no-cors" },
    ])
      expect(answerOf(logged(ctxWith({ route, inbound: inbound({ headers }) })))).toBe(INVALID_SIGNATURE);
    expect(rejected[0]).toMatch(
      /^a web page's request \(Origin or Sec-Fetch-Site header\) to an INSECURE_NO_AUTH route/,
    );
    // The history's reason: the request and what refused it, without the log's explanation.
    expect(
      logged(ctxWith({ route, inbound: inbound({ headers: { origin: "https://evil.example" } }) })),
    ).toMatchObject({
      refusal: "a web page's request (Origin or Sec-Fetch-Site header) to an INSECURE_NO_AUTH route",
    });
    // curl, scripts and webhook senders send neither header.
    const local = ctxWith({ route, inbound: inbound({ headers: { "user-agent": "curl/8.5.0" } }) });
    expect(logged(local)).toBe(local);
  });
  it("a compressed body passes when signed over the decoded JSON or over the bytes as received (the raw body)", () => {
    const wire = gzipSync(body);
    const decoded = decodeContent(wire, "gzip", 1 << 20) as Buffer;
    const signed = (bytes: Buffer) => ({
      "content-encoding": "gzip",
      "x-hub-signature-256": `sha256=${createHmac("sha256", "sekrit").update(bytes).digest("hex")}`,
    });
    const check = (headers: Record<string, string>) =>
      stage(ctxWith({ inbound: inbound({ body: decoded, headers }) }));
    expect(isOutcome(check(signed(decoded)))).toBe(false);
    expect(isOutcome(check(signed(wire)))).toBe(false);
    expect(answerOf(check(signed(Buffer.from("other bytes"))))).toBe(INVALID_SIGNATURE);
  });
});

describe("parse stage", () => {
  it("objects parse; malformed JSON and non-objects are 400", () => {
    expect(parseStage({ inbound: inbound({ body: Buffer.from('{"a":[1]}') }) })).toMatchObject({
      payload: { a: [1] },
    });
    expect(parseStage({ inbound: inbound({ body: Buffer.from("{") }) })).toBe(INVALID_JSON);
    expect(parseStage({ inbound: inbound({ body: Buffer.from("[]") }) })).toBe(NOT_AN_OBJECT);
    expect(parseStage({ inbound: inbound({ body: Buffer.from("null") }) })).toBe(NOT_AN_OBJECT);
  });

  it("a UTF-8 byte order mark before the JSON is skipped (RFC 8259 §8.1 lets a parser ignore it)", () => {
    const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}')]);
    expect(parseStage({ inbound: inbound({ body: withBom }) })).toMatchObject({ payload: { a: 1 } });
    expect(parseStage({ inbound: inbound({ body: Buffer.from([0xef, 0xbb, 0xbf]) }) })).toBe(INVALID_JSON);
  });

  it("a charset parameter is not read: UTF-8 bytes parse whatever it names, other bytes are 400 not UTF-8 (RFC 8259 §8.1)", () => {
    const utf8 = Buffer.from('{"a":"été"}');
    for (const type of [
      "application/json",
      "application/json;charset=UTF-8",
      "application/json; charset=iso-8859-1",
    ]) {
      const headers = { "content-type": type };
      expect(parseStage({ inbound: inbound({ headers, body: utf8 }) })).toMatchObject({
        payload: { a: "été" },
      });
    }
    // What Windows PowerShell's Invoke-RestMethod sends for a string body without charset=utf-8: Latin-1.
    const latin1 = Buffer.from('{"a":"été"}', "latin1");
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('{"a":1}', "utf16le")]);
    for (const [type, body] of [
      ["application/json; charset=iso-8859-1", latin1],
      ["application/json", latin1],
      ["application/json; charset=utf-16", utf16],
    ] as const) {
      expect(parseStage({ inbound: inbound({ headers: { "content-type": type }, body }) })).toBe(NOT_UTF8);
    }
  });

  it("a form's JSON is its payload field, whatever the case and parameters of its content type", () => {
    const json = '{"a":2}';
    const body = Buffer.from(`{"x":1}&payload=${encodeURIComponent(json)}`);
    const forms = [
      "application/x-www-form-urlencoded",
      "Application/X-WWW-Form-URLencoded; charset=utf-8",
      " application/x-www-form-urlencoded ;charset=utf-8",
    ];
    for (const type of forms) {
      const headers = { "content-type": type };
      expect(isForm(headers)).toBe(true);
      expect(parseStage({ inbound: inbound({ headers, body }) })).toMatchObject({ payload: { a: 2 } });
    }
    for (const type of ["application/json", "application/x-www-form-urlencodedx", "text/plain; x=y", ""]) {
      const headers = { "content-type": type };
      expect(isForm(headers)).toBe(false);
      expect(parseStage({ inbound: inbound({ headers, body }) })).toBe(INVALID_JSON);
    }
    expect(isForm({})).toBe(false);
  });

  it("a form's payload whose escapes are not UTF-8 is 400 not UTF-8, as the same JSON sent raw is", () => {
    const headers = { "content-type": "application/x-www-form-urlencoded" };
    const form = (payload: string) => inbound({ headers, body: Buffer.from(`payload=${payload}`) });
    // {"a":"<0xFF>"}: URLSearchParams made it {"a":"\uFFFD"}, accepted with the byte silently replaced.
    expect(parseStage({ inbound: form("%7B%22a%22%3A%22%FF%22%7D") })).toBe(NOT_UTF8);
    expect(
      parseStage({
        inbound: inbound({ body: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]) }),
      }),
    ).toBe(NOT_UTF8);
    // UTF-8 escapes, '+' as a space and a '%' that escapes nothing read as the form standard reads them.
    expect(parseStage({ inbound: form("%7B%22a%22%3A%22%C3%A9+100%25%22%7D") })).toMatchObject({
      payload: { a: "é 100%" },
    });
    expect(parseStage({ inbound: form("%7B%22a%22%3A%22%zz%22%7D") })).toMatchObject({
      payload: { a: "%zz" },
    });
  });
});

describe("event check stage", () => {
  const pings: string[] = [];
  const stage = eventCheckStage({ onPing: (_r, e) => pings.push(e) });
  const withEvent = (events: string[] | undefined, header?: string) =>
    stage(
      ctxWith({
        route: resolved(events === undefined ? {} : { events }),
        inbound: inbound({ headers: header ? { "x-github-event": header } : {} }),
      }),
    );
  it("empty list accepts all; a listed event passes with ctx.event set", () => {
    expect(withEvent(undefined, "push")).toMatchObject({ event: "push" });
    expect(withEvent(["push"], "push")).toMatchObject({ event: "push" });
  });
  it("an unlisted event → 200 ignored with the event (null when none)", () => {
    expect(answerOf(withEvent(["push"], "issues"))).toEqual({
      status: 200,
      body: { status: "ignored", event: "issues" },
    });
    expect(answerOf(withEvent(["push"]))).toEqual({
      status: 200,
      body: { status: "ignored", event: "unknown" },
    });
  });
  it("an ignore keeps why for the delivery history: a fixed text, the event type (sender text) not in it", () => {
    expect(withEvent(["push"], "issues")).toMatchObject({ refusal: NOT_AMONG_EVENTS });
    expect(withEvent(["push"])).toMatchObject({ refusal: NOT_AMONG_EVENTS });
    const quiet = eventCheckStage();
    const ping = (events: string[] | undefined) =>
      quiet(
        ctxWith({
          route: resolved(events === undefined ? {} : { events }),
          inbound: inbound({ headers: { "x-github-event": "ping" } }),
        }),
      );
    expect(ping(undefined)).toMatchObject({ refusal: PING_NOT_LISTED });
    expect(ping(["push"])).toMatchObject({ refusal: PING_NOT_LISTED });
    // The same string each time: nothing made per request.
    expect((withEvent(["push"], "issues") as PipelineCtx).refusal).toBe(NOT_AMONG_EVENTS);
    // An event the route takes goes on with no reason to ignore it.
    expect((withEvent(["push"], "push") as PipelineCtx).event).toBe("push");
    expect((withEvent(["push"], "push") as PipelineCtx).refusal).toBeUndefined();
  });
  it("ping is ignored unless listed, and reported for the DEBUG log", () => {
    expect(answerOf(withEvent(undefined, "ping"))).toEqual({
      status: 200,
      body: { status: "ignored", event: "ping" },
    });
    expect(withEvent(["ping"], "ping")).toMatchObject({ event: "ping" });
    expect(pings).toEqual(["ping"]);
  });
});

describe("filter stage", () => {
  const stage = filterStage({ listReader: () => ({ readList: () => new Set(["a"]) }) });
  it("all top-level filters must match", () => {
    const route = resolved({
      filters: [
        { field: "x", equals: 1 },
        { field: "y", in_file: "list.txt" },
      ],
    });
    const passed = ctxWith({ route, payload: { x: 1, y: "a" } });
    expect(stage(passed)).toBe(passed);
    expect(answerOf(stage(ctxWith({ route, payload: { x: 1, y: "b" } })))).toBe(IGNORED_BY_FILTER);
  });

  it("an ignore names the first filter that did not match, by its field as config.yaml writes it, made when the route is resolved", () => {
    const filters: Filter[] = [
      { field: "x", equals: 1 },
      { field: "headers.X-Forge-Kind", in_file: "list.txt" },
      { any: [{ field: "action", equals: "opened" }, { not: { field: "draft", exists: true } }] },
    ];
    const route = resolveRoute("r", { ...baseRoute, filters }, "sekrit") as ResolvedRoute;
    const refusal = (payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
      (stage(ctxWith({ route, payload, inbound: inbound({ headers }) })) as PipelineCtx).refusal;
    const kind = { "x-forge-kind": "a" };
    expect(refusal({ x: 2 })).toBe("filter x did not match");
    expect(refusal({ x: 1 }, { "x-forge-kind": "b" })).toBe("filter headers.X-Forge-Kind did not match");
    expect(refusal({ x: 1, action: "closed", draft: true }, kind)).toBe(
      "filter any(action, not draft) did not match",
    );
    expect(refusal({ x: 1, action: "opened" }, kind)).toBeUndefined();
    // The route's own strings, made once: an ignored request allocates none.
    expect(filterRefusals(filters).slice(0, 3)).toEqual([
      "filter x did not match",
      "filter headers.X-Forge-Kind did not match",
      "filter any(action, not draft) did not match",
    ]);
    expect(refusal({ x: 2 })).toBe(filterRefusals(filters)[0]);
    // A route resolved again (a dynamic subscription at each lookup) passes the same strings.
    const again = resolveRoute("r", { ...baseRoute, filters }, "sekrit") as ResolvedRoute;
    expect((stage(ctxWith({ route: again, payload: { x: 2 } })) as PipelineCtx).refusal).toBe(
      filterRefusals(filters)[0],
    );
    // Two filters on one field are told apart by their place.
    const twice = resolveRoute(
      "r",
      {
        ...baseRoute,
        filters: [
          { field: "x", exists: true },
          { field: "x", not_equals: 3 },
        ],
      },
      "sekrit",
    ) as ResolvedRoute;
    expect((stage(ctxWith({ route: twice, payload: { x: 3 } })) as PipelineCtx).refusal).toBe(
      "filter x (filters[1]) did not match",
    );
  });

  it("a filter that could not be evaluated (its in_file list cannot be read) is said so, not that it did not match", () => {
    const unreadable = filterStage({
      listReader: () => ({
        readList: () => {
          throw new Error("ENOENT: no such file or directory, open 'list.txt'");
        },
      }),
    });
    const route = resolveRoute(
      "r",
      {
        ...baseRoute,
        filters: [
          { field: "x", equals: 1 },
          {
            any: [
              { field: "y", in_file: "list.txt" },
              { field: "z", equals: true },
            ],
          },
        ],
      },
      "sekrit",
    ) as ResolvedRoute;
    const refusal = (payload: Record<string, unknown>) =>
      (unreadable(ctxWith({ route, payload })) as PipelineCtx).refusal;
    const couldNot =
      "filter any(y, z) could not be evaluated (an in_file list it reads cannot be used, or a regex cannot run: the gateway warns of it at start and on reload)";
    expect(refusal({ x: 1, y: "a" })).toBe(couldNot);
    expect(refusal({ x: 1, y: "a" })).toBe(filterRefusals(route.route.filters ?? [])[3]);
    // A decisive member decides the group whatever the list: matched, or not matched.
    expect(refusal({ x: 1, y: "a", z: true })).toBeUndefined();
    expect(refusal({ x: 2, y: "a" })).toBe("filter x did not match");
  });

  it("keeps an event type only the body named aside for the delivery history; a header's needs no copy", () => {
    const route = resolved({ filters: [{ field: "x", equals: 1 }] });
    const stripe = ctxWith({ route, payload: { type: "invoice.paid", x: 2 }, event: "invoice.paid" });
    expect(answerOf(stage(stripe))).toEqual({ ...IGNORED_BY_FILTER, event: "invoice.paid" });
    const github = ctxWith({
      route,
      inbound: inbound({ headers: { "x-github-event": "push" } }),
      payload: { x: 2 },
      event: "push",
    });
    expect(answerOf(stage(github))).toBe(IGNORED_BY_FILTER);
  });
});

describe("script stage", () => {
  it("replaces the payload or ignores with reason script; routes without a script pass", async () => {
    const stage = scriptStage({
      runScript: async (req) =>
        req.payload.drop
          ? {
              kind: "ignore",
              why: "exited with code 1; stderr: anything",
              reason: "script exited with code 1",
            }
          : { kind: "payload", payload: { replaced: true } },
    });
    expect(await stage(ctxWith({ route: resolved({ script: "s.sh" }) }))).toMatchObject({
      payload: { replaced: true },
    });
    const dropped = await stage(ctxWith({ route: resolved({ script: "s.sh" }), payload: { drop: 1 } }));
    expect(answerOf(dropped)).toBe(IGNORED_BY_SCRIPT);
    // Why, for the delivery history: what the script did, not what it wrote (the log's `why`).
    expect(dropped).toMatchObject({ refusal: "script exited with code 1" });
    const plain = ctxWith();
    expect(await stage(plain)).toBe(plain);
    // The resolved event type is kept aside (never sent) for the delivery history.
    const named = ctxWith({
      route: resolved({ script: "s.sh" }),
      payload: { drop: 1 },
      event: "invoice.paid",
    });
    expect(answerOf(await stage(named))).toEqual({ ...IGNORED_BY_SCRIPT, event: "invoice.paid" });
  });

  it("a delivery id that is not UTF-8 text is refused 400 before the script runs; others reach it as sent", async () => {
    const ids: Array<string | undefined> = [];
    const stage = scriptStage({
      runScript: async (req) => {
        ids.push(req.deliveryId);
        return { kind: "payload", payload: {} };
      },
    });
    const withId = (headers: Record<string, string>) =>
      ctxWith({ route: resolved({ script: "s.sh" }), inbound: inbound({ headers }) });
    const refused = answerOf(await stage(withId({ "svix-id": "msg_\ufffd1" })));
    expect(refused).toMatchObject({
      status: 400,
      body: { error: expect.stringContaining("in svix-id is not UTF-8") },
    });
    await stage(withId({ "svix-id": " msg_1 " }));
    await stage(withId({}));
    expect(ids).toEqual(["msg_1", undefined]);
  });
});

describe("idempotency stage", () => {
  it("keys per route, generates an id when none is sent, answers duplicate", () => {
    const seen = new Set<string>();
    const stage = idempotencyStage({
      checkAndAdd: (k) => {
        if (seen.has(k)) return true;
        seen.add(k);
        return false;
      },
      randomId: () => "rnd",
    });
    const sent = ctxWith({ inbound: inbound({ headers: { "x-request-id": "id-1" } }) });
    expect(stage(sent)).toMatchObject({ deliveryId: "id-1" });
    expect(stage(sent)).toBe(DUPLICATE);
    expect([...seen]).toEqual(["r:id-1"]);
    expect(stage(ctxWith())).toMatchObject({ deliveryId: "rnd" });
    expect(stage(ctxWith())).toMatchObject({ deliveryId: "rnd" });
  });

  it("a duplicate keeps the resolved event type aside for the delivery history (its body names none)", () => {
    const stage = idempotencyStage({ checkAndAdd: () => true, randomId: () => "rnd" });
    // Stripe names its event only in the body: the history had no header to take it from.
    const stripe = ctxWith({
      inbound: inbound({ headers: { "x-request-id": "id-1" } }),
      event: "invoice.paid",
    });
    expect(stage(stripe)).toEqual({ ...DUPLICATE, event: "invoice.paid" });
  });

  it("a delivery id that is not UTF-8 text (U+FFFD) is refused 400 naming its header, never recorded", () => {
    const seen: string[] = [];
    const stage = idempotencyStage({ checkAndAdd: (k) => (seen.push(k), false), randomId: () => "rnd" });
    const github = ctxWith({
      inbound: inbound({ headers: { "x-github-delivery": "a\ufffdb" } }),
      event: "push",
    });
    expect(answerOf(stage(github) as PipelineCtx | Outcome)).toEqual({
      status: 400,
      body: {
        error:
          "Bad request: the delivery ID in X-GitHub-Delivery is not UTF-8 text (a byte that is not UTF-8 reads as U+FFFD, so two IDs could not be told apart) — send it as UTF-8, printable ASCII at best",
      },
      event: "push",
    });
    expect(seen).toEqual([]);
  });
});

describe("accept, dispatch and deliver stages", () => {
  const accepted = (route: Partial<Route>) =>
    acceptStage(
      ctxWith({
        route: resolved({ prompt: "hi {n}", ...route }),
        payload: { n: 2 },
        deliveryId: "d",
        event: "push",
      }),
    ) as PipelineCtx;

  it("accept renders the prompt", () => {
    expect(accepted({}).accepted).toMatchObject({
      prompt: "hi 2",
      deliveryId: "d",
      event: "push",
      routeName: "r",
    });
  });

  it("agent routes are enqueued and answered 202 accepted", () => {
    const queued: AcceptedEvent[] = [];
    const stage = dispatchStage({
      modes: {},
      enqueueRun: (e) => {
        queued.push(e);
        return true;
      },
      forget: () => {},
    });
    expect(stage(accepted({}))).toEqual({
      status: 202,
      body: { status: "accepted", route: "r", event: "push", delivery_id: "d" },
    });
    expect(queued).toHaveLength(1);
  });

  it("a 202's text is its body's JSON, written from its texts rather than by JSON.stringify of the body per request", () => {
    // Texts JSON escapes (quotes, backslashes, controls, separators, lone surrogates) and ones it leaves.
    const texts = [
      "pr",
      'a"b\\c',
      "tab\tnl\n\u0001",
      "\u2028\u2029",
      "\ud800x\udfff",
      "ünï 🚀",
      "",
      "pull_request",
    ];
    const events = texts.flatMap((route, i) =>
      texts.map((event, j) => ({
        routeName: route,
        event: j === 7 ? undefined : event,
        deliveryId: texts[(i + j) % 8] ?? "",
      })),
    );
    const bodies: string[] = [];
    const stringify = vi.spyOn(JSON, "stringify");
    try {
      // Each event twice in a row, then the next: the route and event texts repeat as on a busy route.
      for (const event of events)
        for (const deliveryId of [event.deliveryId, `${event.deliveryId}-2`])
          bodies.push(answerText(acceptedOutcome({ ...event, deliveryId } as AcceptedEvent)));
      expect(stringify.mock.calls.filter(([value]) => typeof value !== "string")).toEqual([]);
    } finally {
      stringify.mockRestore();
    }
    const expected = events.flatMap((event) =>
      [event.deliveryId, `${event.deliveryId}-2`].map((deliveryId) =>
        JSON.stringify({
          status: "accepted",
          route: event.routeName,
          event: event.event ?? UNNAMED_EVENT,
          delivery_id: deliveryId,
        }),
      ),
    );
    expect(bodies).toEqual(expected);
  });

  it("a full run queue answers 503 and forgets the delivery id so the retry is not a duplicate", () => {
    const forgotten: string[] = [];
    const stage = dispatchStage({ modes: {}, enqueueRun: () => false, forget: (k) => forgotten.push(k) });
    expect(stage(accepted({}))).toEqual({
      status: 503,
      body: { error: "Agent run queue is full, retry later" },
      headers: { "Retry-After": "30" },
    });
    expect(forgotten).toEqual(["r:d"]);
  });

  it("a shared store's id is kept for its hour once the event is stored, and forgotten when it could not be", async () => {
    const log: string[] = [];
    let store: (taken: boolean) => void = () => {};
    const stage = dispatchStage({
      modes: { coalesce: async () => "coalesced" as const },
      enqueueRun: () =>
        new Promise<boolean>((resolve) => {
          store = resolve;
        }),
      forget: (k) => log.push(`forget ${k}`),
      keep: async (k) => {
        log.push(`keep ${k}`);
      },
    });
    const answer = stage(accepted({})) as Promise<unknown>;
    await Promise.resolve();
    expect(log).toEqual([]); // nothing kept before the store answered
    store(true);
    expect(await answer).toMatchObject({ status: 202 });
    expect(log).toEqual(["keep r:d"]);
    // A full shared queue: 503, the id forgotten, never kept.
    log.length = 0;
    const full = stage(accepted({})) as Promise<unknown>;
    store(false);
    expect(await full).toMatchObject({ status: 503 });
    expect(log).toEqual(["forget r:d"]);
    // The store failed: the id is forgotten and the failure goes on (a 503 from the stage driver).
    log.length = 0;
    const failed = stage(accepted({})) as Promise<unknown>;
    (store as unknown as (v: Promise<boolean>) => void)(Promise.reject(new Error("redis down")));
    await expect(failed).rejects.toThrow("redis down");
    expect(log).toEqual(["forget r:d"]);
    // Coalesced in the shared store: kept too.
    log.length = 0;
    expect(
      await stage(accepted({ coalesce: { key: "k", window_seconds: 30, max_wait_seconds: 300 } })),
    ).toMatchObject({ status: 202 });
    expect(log).toEqual(["keep r:d"]);
    // A direct delivery (it may take minutes) and a cron fire skipped at once: kept right away.
    log.length = 0;
    expect(stage(accepted({ deliver_only: true, deliver: "telegram" }))).toMatchObject({ accepted: {} });
    const cron = dispatchStage({
      modes: { fireCronJob: () => ({ skipped: "cron_job nightly is paused; event dropped" }) },
      enqueueRun: () => true,
      forget: (k) => log.push(`forget ${k}`),
      keep: async (k) => {
        log.push(`keep ${k}`);
      },
    });
    expect(cron(accepted({ cron_job: "nightly" }))).toMatchObject({ status: 202 });
    expect(log).toEqual(["keep r:d", "keep r:d"]);
  });

  it("a direct delivery a shared store tracks is not kept first: its id stays pending until the delivery ends, for the other instances to wait on", () => {
    const log: string[] = [];
    const stage = dispatchStage({
      modes: {},
      enqueueRun: () => true,
      forget: (k) => log.push(`forget ${k}`),
      keep: async (k) => {
        log.push(`keep ${k}`);
      },
      beginDirect: (k) => {
        log.push(`begin ${k}`);
        return true;
      },
    });
    expect(stage(accepted({ deliver_only: true, deliver: "telegram" }))).toMatchObject({ accepted: {} });
    // Kept for its hour before it was marked as delivering, another instance looking in between took
    // the event for one handled: its duplicate was answered `duplicate`, and the delivery then failed.
    expect(log).toEqual(["begin r:d"]);
  });

  it("deliver_only routes pass dispatch untouched to the delivery stage", async () => {
    const stage = dispatchStage({ modes: {}, enqueueRun: () => true, forget: () => {} });
    const ctx = accepted({ deliver_only: true, deliver: "telegram" });
    expect(stage(ctx)).toBe(ctx);
    const forgotten: string[] = [];
    const ok = deliverStage({ deliverDirect: async () => true, forget: (k) => forgotten.push(k) });
    // The documented body; the event type kept aside for the delivery history, never sent.
    expect(await ok(ctx)).toEqual({
      status: 200,
      body: { status: "delivered", route: "r", target: "telegram", delivery_id: "d" },
      event: "push",
    });
    const bad = deliverStage({ deliverDirect: async () => false, forget: (k) => forgotten.push(k) });
    // The documented body; the delivery id and event type kept aside for the history and the access log, never sent.
    expect(await bad(ctx)).toEqual({ ...DELIVERY_FAILED, deliveryId: "d", event: "push" });
    expect(forgotten).toEqual(["r:d"]);
  });

  it("cron and coalesce hooks decide their routes; absent hooks are reported", () => {
    const notes: string[] = [];
    const none = dispatchStage({
      modes: {},
      enqueueRun: () => {
        notes.push("run");
        return true;
      },
      forget: () => {},
      onCronUnavailable: () => notes.push("no-cron"),
      onCoalesceUnavailable: () => notes.push("no-coalesce"),
    });
    expect(none(accepted({ cron_job: "j" }))).toMatchObject({ status: 202, body: { status: "accepted" } });
    expect(
      none(accepted({ coalesce: { key: "k", window_seconds: 30, max_wait_seconds: 300 } })),
    ).toMatchObject({ status: 202 });
    expect(notes).toEqual(["no-cron", "no-coalesce", "run"]);
    const hooked = dispatchStage({
      modes: {
        coalesce: () => "coalesced",
        fireCronJob: () => ({ skipped: "cron_job nightly is paused; event dropped" }),
      },
      enqueueRun: () => {
        notes.push("run2");
        return true;
      },
      forget: () => {},
    });
    // The body is the documented one; the event's delivery ID and type are kept aside (never sent) for the
    // access log and the delivery history, which recorded an event without a sender's ID as "-".
    expect(hooked(accepted({ coalesce: { key: "k", window_seconds: 30, max_wait_seconds: 300 } }))).toEqual({
      status: 202,
      body: { status: "coalesced" },
      deliveryId: "d",
      event: "push",
    });
    expect(hooked(accepted({ cron_job: "j" }))).toMatchObject({ status: 202, body: { status: "accepted" } });
    expect(notes).not.toContain("run2");
  });
});
