import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HTTP_SERVERS, startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson, rawHttp, request } from "../../helpers/http.js";

const OPEN = "INSECURE_NO_AUTH";

describe.each(HTTP_SERVERS)("HTTP endpoints (spec 4.1, 2.7, 7) on the %s server", (http) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      http,
      config: webhookConfig(
        {
          open: { secret: OPEN },
          prs: { secret: OPEN, events: ["pull_request", "Merge Request Hook"] },
          pingable: { secret: OPEN, events: ["ping"] },
        },
        { max_body_bytes: 1024 },
      ),
    });
  });
  afterAll(() => gw.stop());

  it("GET /health answers 200 {status: ok, platform: webhook} as JSON", async () => {
    const res = await fetch(gw.url("/health"));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(await res.json()).toEqual({ status: "ok", platform: "webhook" });
  });

  it("HEAD /health answers 200 with no body, and the connection stays usable", async () => {
    const head = await fetch(gw.url("/health"), { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toBe("application/json");
    expect(await head.text()).toBe("");
    for (let i = 0; i < 3; i++) {
      expect((await fetch(gw.url("/health"), { method: "HEAD" })).status).toBe(200);
      expect(await request(gw.url("/health"))).toMatchObject({ status: 200, body: { status: "ok" } });
    }
  });

  it("an unknown path is 404 and a wrong method is 405, both JSON errors", async () => {
    expect(await request(gw.url("/nowhere"))).toMatchObject({ status: 404, body: { error: "Not found" } });
    expect(await request(gw.url("/health"), { method: "POST" })).toMatchObject({
      status: 405,
      body: { error: "Method not allowed" },
    });
    expect(await request(gw.url("/webhooks/open"))).toMatchObject({
      status: 405,
      body: { error: "Method not allowed" },
    });
    expect(await request(gw.url("/p/default/webhooks/open"), { method: "POST", body: "{}" })).toMatchObject({
      status: 404,
    });
  });

  it("the route is looked up before the method is judged: another method on a name that is no route is 404, on a route 405", async () => {
    for (const method of ["GET", "PUT", "DELETE", "OPTIONS"]) {
      const body = method === "GET" ? {} : { body: "{}" };
      expect(await request(gw.url("/webhooks/missing"), { method, ...body }), method).toMatchObject({
        status: 404,
        body: { error: "Unknown route" },
      });
      const res = await request(gw.url("/webhooks/open"), { method, ...body });
      expect(res, method).toMatchObject({ status: 405, body: { error: "Method not allowed" } });
      expect(res.headers.get("allow"), method).toBe("POST");
    }
    const head = await fetch(gw.url("/webhooks/missing"), { method: "HEAD" });
    expect(head.status).toBe(404);
    expect(head.headers.get("allow")).toBeNull();
    expect(await head.text()).toBe("");
  });

  it("an unknown route is 404 Unknown route", async () => {
    expect(await postJson(gw.url("/webhooks/missing"), {})).toMatchObject({
      status: 404,
      body: { error: "Unknown route" },
    });
  });

  it("an unknown route is answered before the body is read: no body is ever sent", async () => {
    const answer = await rawHttp(gw.gateway.port, [
      "POST /webhooks/missing HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n",
    ]);
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.body)).toEqual({ error: "Unknown route" });
  });

  it("malformed JSON is 400; valid JSON that is not an object is 400 too", async () => {
    expect(await postJson(gw.url("/webhooks/open"), "{not json")).toMatchObject({
      status: 400,
      body: { error: "Invalid JSON body" },
    });
    for (const body of ["[1,2]", '"text"', "42", "null"]) {
      expect(await postJson(gw.url("/webhooks/open"), body)).toMatchObject({
        status: 400,
        body: { error: "Invalid JSON body: expected a JSON object" },
      });
    }
  });

  it("an accepted event answers 202 {status: accepted, route, event, delivery_id}", async () => {
    const res = await postJson(
      gw.url("/webhooks/prs"),
      { action: "opened" },
      {
        "X-GitHub-Event": "pull_request",
        "X-GitHub-Delivery": "d-1",
      },
    );
    expect(res).toMatchObject({
      status: 202,
      body: { status: "accepted", route: "prs", event: "pull_request", delivery_id: "d-1" },
    });
    expect(Object.keys(res.body).sort()).toEqual(["delivery_id", "event", "route", "status"]);
  });

  it("with no event type the accepted body says event unknown and a generated delivery id", async () => {
    const res = await postJson(gw.url("/webhooks/open"), { a: 1 });
    expect(res.status).toBe(202);
    expect(res.body.event).toBe("unknown");
    expect(res.body.delivery_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("the event type comes from X-Forge-Event, X-Alt-Forge-Event, X-Gitlab-Event or payload event_type, verbatim", async () => {
    const cases: Array<[Record<string, string>, Record<string, unknown>, string]> = [
      [{ "X-Forge-Event": "pull_request" }, {}, "pull_request"],
      [{ "X-Alt-Forge-Event": "Merge Request Hook" }, {}, "Merge Request Hook"],
      [{ "X-Gitlab-Event": "Merge Request Hook" }, {}, "Merge Request Hook"],
      [{}, { event_type: "pull_request" }, "pull_request"],
    ];
    for (const [headers, body, event] of cases) {
      expect(await postJson(gw.url("/webhooks/prs"), body, headers)).toMatchObject({
        status: 202,
        body: { event },
      });
    }
  });

  it("with several event sources, X-Forge-Event wins over X-Alt-Forge-Event, and a header over the payload's event_type", async () => {
    const body = { event_type: "from_body" };
    expect(
      await postJson(gw.url("/webhooks/open"), body, {
        "X-Forge-Event": "from_forge",
        "X-Alt-Forge-Event": "from_alt",
      }),
    ).toMatchObject({ status: 202, body: { event: "from_forge" } });
    expect(await postJson(gw.url("/webhooks/open"), body, { "X-Alt-Forge-Event": "from_alt" })).toMatchObject(
      {
        status: 202,
        body: { event: "from_alt" },
      },
    );
  });

  it("an event not in the route's events list is 200 {status: ignored, event}", async () => {
    expect(await postJson(gw.url("/webhooks/prs"), {}, { "X-GitHub-Event": "push" })).toMatchObject({
      status: 200,
      body: { status: "ignored", event: "push" },
    });
    expect(await postJson(gw.url("/webhooks/prs"), {}, { "X-Forge-Event": "merge_request" })).toMatchObject({
      status: 200,
      body: { status: "ignored", event: "merge_request" },
    });
    expect(await postJson(gw.url("/webhooks/prs"), {})).toMatchObject({
      status: 200,
      body: { status: "ignored", event: "unknown" },
    });
  });

  it("a ping is ignored (logged at DEBUG only) unless the events list names it", async () => {
    expect(
      await postJson(gw.url("/webhooks/open"), { zen: "hi" }, { "X-GitHub-Event": "ping" }),
    ).toMatchObject({
      status: 200,
      body: { status: "ignored", event: "ping" },
    });
    const pingLines = gw.logs().filter((l) => l.msg.includes("ping event ignored"));
    expect(pingLines.length).toBeGreaterThan(0);
    expect(pingLines.every((l) => l.level === 20)).toBe(true);
    expect(await postJson(gw.url("/webhooks/pingable"), {}, { "X-GitHub-Event": "ping" })).toMatchObject({
      status: 202,
      body: { status: "accepted", event: "ping" },
    });
  });

  it("a query string does not change the route, nor the health answer", async () => {
    expect(await postJson(gw.url("/webhooks/open?x=1"), { a: 1 })).toMatchObject({
      status: 202,
      body: { route: "open" },
    });
    expect(await request(gw.url("/health?probe=1"))).toMatchObject({
      status: 200,
      body: { status: "ok", platform: "webhook" },
    });
  });

  it("the webhook paths carry no version segment (spec 9): a versioned path is no route", async () => {
    expect(await postJson(gw.url("/v1/webhooks/open"), {})).toMatchObject({
      status: 404,
      body: { error: "Not found" },
    });
    expect(await postJson(gw.url("/webhooks/v1/open"), {})).toMatchObject({
      status: 404,
      body: { error: "Unknown route" },
    });
  });
});
