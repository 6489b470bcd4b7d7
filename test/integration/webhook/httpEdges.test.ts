import { createHmac } from "node:crypto";
import { gzipSync } from "node:zlib";
import { sign as signGithub } from "@octokit/webhooks-methods";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HTTP_SERVERS, startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson, rawHttp, request } from "../../helpers/http.js";

/** Request shapes a real client or proxy may produce that the spec's happy path does not show. */

const SECRET = "edge-secret";
const OPEN = "INSECURE_NO_AUTH";

describe.each(HTTP_SERVERS)("HTTP edge cases on the %s server", (http) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      http,
      config: webhookConfig(
        {
          "my-route": { secret: SECRET },
          open: { secret: OPEN },
          accents: {
            secret: OPEN,
            events: ["déploiement"],
            filters: [{ field: "headers.X-Team", equals: "l'équipe ünie" }],
          },
        },
        { rate_limit: 1000, max_body_bytes: 1_048_576 },
      ),
    });
  });
  afterAll(() => gw.stop());

  it("a percent-encoded route name names the same route (RFC 3986: %2D is '-')", async () => {
    const body = '{"a":1}';
    const headers = { "X-Hub-Signature-256": await signGithub(SECRET, body) };
    for (const path of ["/webhooks/my%2Droute", "/webhooks/%6Dy-route", "/webhooks/my%2droute"]) {
      expect(await postJson(gw.url(path), body, headers), path).toMatchObject({
        status: 202,
        body: { status: "accepted", route: "my-route" },
      });
    }
    // A bad escape or an escaped slash never names a route.
    for (const path of ["/webhooks/my%2", "/webhooks/my%2Froute", "/webhooks/%E0%A4%A"]) {
      expect((await postJson(gw.url(path), body, headers)).status, path).toBe(404);
    }
  });

  it("a gzip-encoded body signed over its JSON (GetStream's compressed webhooks) is accepted; one decoding past max_body_bytes is 413", async () => {
    const body = '{"action":"opened"}';
    const signed = { "Content-Encoding": "gzip", "X-Hub-Signature-256": await signGithub(SECRET, body) };
    expect(await postJson(gw.url("/webhooks/my-route"), gzipSync(body), signed)).toMatchObject({
      status: 202,
      body: { status: "accepted", route: "my-route" },
    });
    // Not gzip after all: the signature check still comes first.
    const notGzip = { "Content-Encoding": "gzip", "X-Hub-Signature-256": await signGithub(SECRET, "{}") };
    expect((await postJson(gw.url("/webhooks/my-route"), "nope", notGzip)).status).toBe(401);
    const bomb = gzipSync(Buffer.alloc(1_048_577, " "));
    expect(await postJson(gw.url("/webhooks/open"), bomb, { "Content-Encoding": "gzip" })).toMatchObject({
      status: 413,
      body: { error: "Payload too large" },
    });
  });

  it("a body under more than 5 codings is never decoded: 401 unsigned, 415 on an open route; 5 are undone", async () => {
    const body = '{"action":"opened"}';
    const layered = (n: number) => {
      let wire = Buffer.from(body);
      for (let i = 0; i < n; i++) wire = gzipSync(wire);
      return { wire, coding: Array(n).fill("gzip").join(", ") };
    };
    const five = layered(5);
    expect(
      await postJson(gw.url("/webhooks/my-route"), five.wire, {
        "Content-Encoding": five.coding,
        "X-Hub-Signature-256": await signGithub(SECRET, body),
      }),
    ).toMatchObject({ status: 202, body: { status: "accepted" } });
    const six = layered(6);
    expect(
      await postJson(gw.url("/webhooks/my-route"), six.wire, { "Content-Encoding": six.coding }),
    ).toMatchObject({ status: 401, body: { error: "Invalid signature" } });
    const open = await postJson(gw.url("/webhooks/open"), six.wire, { "Content-Encoding": six.coding });
    expect(open).toMatchObject({
      status: 415,
      body: {
        error:
          "Unsupported Content-Encoding: more than 5 codings — send the body uncompressed, or compressed once as gzip, deflate or br",
      },
    });
    expect(open.headers.get("accept-encoding")).toBe("gzip, deflate, br");
  });

  it("a webhook path that names no route (empty, nested, trailing slash) is 404 Unknown route, unread", async () => {
    for (const path of ["/webhooks/", "/webhooks/my-route/", "/webhooks/a/b", "/webhooks/my%2Froute"]) {
      expect(await postJson(gw.url(path), "{}"), path).toEqual(
        expect.objectContaining({ status: 404, body: { error: "Unknown route" } }),
      );
    }
    // Answered before the body: one announced and never sent is not waited for.
    const answer = await rawHttp(gw.gateway.port, [
      "POST /webhooks/a/b HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n",
    ]);
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.body)).toEqual({ error: "Unknown route" });
    expect(await request(gw.url("/elsewhere"), { method: "POST", body: "{}" })).toMatchObject({
      status: 404,
      body: { error: "Not found" },
    });
  });

  it("an empty body: a valid signature of it (octokit refuses to sign one) gets 400 Invalid JSON body, a missing one 401", async () => {
    expect(
      await postJson(gw.url("/webhooks/my-route"), "", {
        "X-Hub-Signature-256": `sha256=${createHmac("sha256", SECRET).update("").digest("hex")}`,
      }),
    ).toEqual(expect.objectContaining({ status: 400, body: { error: "Invalid JSON body" } }));
    expect(await postJson(gw.url("/webhooks/my-route"), "")).toMatchObject({
      status: 401,
      body: { error: "Invalid signature" },
    });
  });

  it("a body that is not UTF-8 is 400 Invalid JSON body, after the signature check", async () => {
    // {"name":"café"} in Latin-1: 0xE9 alone is not UTF-8.
    const latin1 = Buffer.from('{"name":"caf\xe9"}', "latin1");
    const signature = `sha256=${createHmac("sha256", SECRET).update(latin1).digest("hex")}`;
    expect(
      await postJson(gw.url("/webhooks/my-route"), latin1, { "X-Hub-Signature-256": signature }),
    ).toEqual(expect.objectContaining({ status: 400, body: { error: "Invalid JSON body: not UTF-8" } }));
    expect(
      await postJson(gw.url("/webhooks/my-route"), latin1, { "X-Hub-Signature-256": "sha256=00" }),
    ).toMatchObject({ status: 401, body: { error: "Invalid signature" } });
    // The same text in UTF-8 is fine.
    expect(await postJson(gw.url("/webhooks/open"), Buffer.from('{"name":"café"}', "utf8"))).toMatchObject({
      status: 202,
    });
  });

  it("a UTF-16 or UTF-32 body is 400 Invalid JSON body: not UTF-8, ASCII text too (whose bytes pass as UTF-8 with NULs)", async () => {
    const text = '{"name":"x"}';
    const utf16be = Buffer.from(text, "utf16le").swap16();
    const utf32le = Buffer.concat([...text].map((c) => Buffer.from([c.charCodeAt(0), 0, 0, 0])));
    for (const [name, body] of [
      ["utf-16le", Buffer.from(text, "utf16le")],
      ["utf-16be", utf16be],
      ["utf-32le", utf32le],
      ["utf-16le with a leading space", Buffer.from(` ${text}`, "utf16le")],
    ] as const) {
      expect(await postJson(gw.url("/webhooks/open"), body), name).toMatchObject({
        status: 400,
        body: { error: "Invalid JSON body: not UTF-8" },
      });
    }
    // A NUL inside otherwise UTF-8 JSON is bad JSON, named as such.
    const rawNul = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0]), Buffer.from('x"}')]);
    expect(await postJson(gw.url("/webhooks/open"), rawNul)).toMatchObject({
      status: 400,
      body: { error: "Invalid JSON body" },
    });
  });

  it("valid JSON nested thousands deep is 400 (not a 500), and its delivery id is not remembered", async () => {
    const deep = `{"a":${"[".repeat(100_000)}${"]".repeat(100_000)}}`;
    const headers = { "X-GitHub-Delivery": "deep-1" };
    expect(await postJson(gw.url("/webhooks/open"), deep, headers)).toMatchObject({
      status: 400,
      body: { error: "Invalid JSON body: nested too deeply" },
    });
    // Brackets inside strings are text, not nesting.
    const bracketText = JSON.stringify({ text: "[{".repeat(2000) });
    expect(await postJson(gw.url("/webhooks/open"), bracketText, headers)).toMatchObject({
      status: 202,
      body: { status: "accepted", delivery_id: "deep-1" },
    });
    const nested = JSON.stringify({ a: JSON.parse(`${"[".repeat(100)}1${"]".repeat(100)}`) });
    expect(await postJson(gw.url("/webhooks/open"), nested)).toMatchObject({ status: 202 });
  });

  it("405 names the allowed methods in Allow (RFC 9110 §15.5.6): POST on webhook paths, GET, HEAD on /health", async () => {
    for (const method of ["GET", "PUT", "DELETE", "PATCH", "OPTIONS"]) {
      const res = await request(gw.url("/webhooks/my-route"), {
        method,
        ...(method === "GET" ? {} : { body: "{}" }),
      });
      expect(res, method).toMatchObject({ status: 405, body: { error: "Method not allowed" } });
      expect(res.headers.get("allow"), method).toBe("POST");
    }
    const head = await fetch(gw.url("/webhooks/my-route"), { method: "HEAD" });
    expect(head.status).toBe(405);
    expect(head.headers.get("allow")).toBe("POST");
    expect(await head.text()).toBe("");
    const health = await request(gw.url("/health"), { method: "POST", body: "{}" });
    expect(health).toMatchObject({ status: 405, body: { error: "Method not allowed" } });
    expect(health.headers.get("allow")).toBe("GET, HEAD");
    expect((await fetch(gw.url("/health"))).headers.get("allow")).toBeNull();
  });

  it("CONNECT (which node:http hands over as a tunnel) is answered as any other method: 405 with Allow", async () => {
    const cases: Array<[string, number, string | undefined]> = [
      ["/webhooks/open", 405, "POST"],
      ["/health", 405, "GET, HEAD"],
      ["/metrics", 405, "GET, HEAD"],
    ];
    for (const [target, status, allow] of cases) {
      const answer = await rawHttp(gw.gateway.port, [
        // A local scraper's Host: /metrics answers any other a 404, as an unknown path (metricsLocalOnly.test.ts).
        `CONNECT ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`,
      ]);
      expect(answer.status, target).toBe(status);
      expect(answer.head.match(/\r\nAllow: ([^\r]*)/i)?.[1], target).toBe(allow);
      expect(JSON.parse(answer.body), target).toHaveProperty("error");
    }
  });

  it("a header line sent twice with the same value counts once: signature, event and delivery id", async () => {
    const body = '{"a":1}';
    const signature = await signGithub(SECRET, body);
    const twice = (name: string, value: string) => `${name}: ${value}\r\n${name}: ${value}\r\n`;
    const send = (lines: string) =>
      rawHttp(gw.gateway.port, [
        `POST /webhooks/my-route HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n${lines}\r\n${body}`,
      ]);
    const answer = await send(
      twice("X-Hub-Signature-256", signature) +
        twice("X-GitHub-Event", "push") +
        twice("X-GitHub-Delivery", `twice-${http}`),
    );
    expect(answer.status).toBe(202);
    expect(JSON.parse(answer.body)).toMatchObject({ event: "push", delivery_id: `twice-${http}` });
    // The retry with each header once is the same delivery.
    const retry = await send(`X-Hub-Signature-256: ${signature}\r\nX-GitHub-Delivery: twice-${http}\r\n`);
    expect(JSON.parse(retry.body)).toEqual({ status: "duplicate" });
    // Two different signatures are no signature: 401 even though one of them is valid.
    const differing = await send(
      `X-Hub-Signature-256: ${signature}\r\nX-Hub-Signature-256: sha256=${"0".repeat(64)}\r\n`,
    );
    expect(differing.status).toBe(401);
  });

  it("an empty header line next to one with a value adds nothing: delivery id, event and signature read as the value", async () => {
    const body = '{"b":2}';
    const signature = await signGithub(SECRET, body);
    const send = (lines: string) =>
      rawHttp(gw.gateway.port, [
        `POST /webhooks/my-route HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n${lines}\r\n${body}`,
      ]);
    const id = `blank-line-${http}`;
    const answer = await send(
      `X-GitHub-Delivery:\r\nX-GitHub-Delivery: ${id}\r\n` +
        `X-GitHub-Event: push\r\nX-GitHub-Event:   \r\n` +
        `X-Hub-Signature-256: \r\nX-Hub-Signature-256: ${signature}\r\n`,
    );
    expect(answer.status).toBe(202);
    expect(JSON.parse(answer.body)).toMatchObject({ event: "push", delivery_id: id });
    // The sender's retry that sends the id once is the same delivery.
    const retry = await send(`X-Hub-Signature-256: ${signature}\r\nX-GitHub-Delivery: ${id}\r\n`);
    expect(JSON.parse(retry.body)).toEqual({ status: "duplicate" });
  });

  // Non-ASCII inside the value: uWS drops non-ASCII bytes at either end of a header value (docs/webhook.md).
  it("header values are read as UTF-8: a non-ASCII event name and header filter match the config's text", async () => {
    const send = (event: string, team: string) =>
      rawHttp(gw.gateway.port, [
        Buffer.concat([
          Buffer.from("POST /webhooks/accents HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nX-Forge-Event: "),
          Buffer.from(event, "utf8"),
          Buffer.from("\r\nX-Team: "),
          Buffer.from(team, "utf8"),
          Buffer.from("\r\n\r\n{}"),
        ]),
      ]);
    const accepted = await send("déploiement", "l'équipe ünie");
    expect(accepted.status).toBe(202);
    expect(JSON.parse(accepted.body)).toMatchObject({ status: "accepted", event: "déploiement" });
    expect(JSON.parse((await send("déploiement", "equipe uni")).body)).toEqual({
      status: "ignored",
      reason: "filter",
    });
    expect(JSON.parse((await send("deploiement", "l'équipe ünie")).body)).toEqual({
      status: "ignored",
      event: "deploiement",
    });
  });

  it("two Content-Length headers are 400 and never processed (RFC 9112 §6.3: a request smuggling shape)", async () => {
    // A proxy in front may frame the body by the other value; the request must not be acted on.
    for (const lengths of [
      [2, 7],
      [2, 2],
    ]) {
      const answer = await rawHttp(gw.gateway.port, [
        `POST /webhooks/open HTTP/1.1\r\nHost: x\r\nX-Request-ID: smuggle-${lengths[1]}\r\n` +
          `Content-Length: ${lengths[0]}\r\nContent-Length: ${lengths[1]}\r\n\r\n{}{"a":1}`,
      ]);
      expect(answer.status, String(lengths)).toBe(400);
      expect(
        await postJson(gw.url("/webhooks/open"), {}, { "X-Request-ID": `smuggle-${lengths[1]}` }),
      ).toMatchObject({ status: 202, body: { status: "accepted" } });
    }
  });
});
