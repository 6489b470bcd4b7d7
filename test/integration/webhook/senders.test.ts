import { createHash, createHmac } from "node:crypto";
import { sign as signGithub } from "@octokit/webhooks-methods";
import { SignJWT } from "jose";
import { Webhook as StandardWebhook } from "standardwebhooks";
import Stripe from "stripe";
import { Webhook as SvixWebhook } from "svix";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { githubExamplesOf } from "../../helpers/githubExamples.js";
import { postJson, rawHttp } from "../../helpers/http.js";

/** What the real senders' own libraries produce, sent to the real gateway (spec 5, 8). */

const WHSEC = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const GENERIC = "generic-secret";
const hex = (key: string, text: string) => createHmac("sha256", key).update(text).digest("hex");
const stripe = new Stripe("sk_test_not_used_offline");

describe("real senders' signatures at the edges", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      config: webhookConfig(
        {
          stripe: { secret: WHSEC },
          sw: { secret: WHSEC },
          generic: { secret: GENERIC },
          bitbucket: { secret: GENERIC, events: ["pullrequest:created", "repo:refs_changed"] },
          netlify: { secret: GENERIC, filters: [{ field: "state", equals: "ready" }] },
        },
        { rate_limit: 1000 },
      ),
    });
  });
  afterAll(() => gw.stop());

  const post = (route: string, body: string, headers: Record<string, string>) =>
    postJson(gw.url(`/webhooks/${route}`), body, headers);
  const nowSeconds = () => Math.floor(gw.clock.now() / 1000);
  /** What Stripe's own verifier says about the same request, at the gateway's clock. */
  const stripeAccepts = (body: string, header: string) => {
    try {
      stripe.webhooks.constructEvent(body, header, WHSEC, 300, undefined, gw.clock.now());
      return true;
    } catch {
      return false;
    }
  };

  it("Stripe: stripe.webhooks.generateTestHeaderString is accepted; the event type comes from the body's type", async () => {
    const body = JSON.stringify({ id: "evt_1", object: "event", type: "invoice.paid" });
    const header = stripe.webhooks.generateTestHeaderString({
      payload: body,
      secret: WHSEC,
      timestamp: nowSeconds(),
    });
    expect(stripeAccepts(body, header)).toBe(true);
    expect(await post("stripe", body, { "Stripe-Signature": header })).toMatchObject({
      status: 202,
      body: { status: "accepted", route: "stripe", event: "invoice.paid" },
    });
  });

  it("Stripe: a tampered body, a wrong secret and a signature older than 300 s are 401, as Stripe's verifier says", async () => {
    const body = JSON.stringify({ id: "evt_2", type: "invoice.paid", amount: 100 });
    const now = nowSeconds();
    const good = stripe.webhooks.generateTestHeaderString({ payload: body, secret: WHSEC, timestamp: now });
    const tampered = body.replace("100", "999");
    const wrongSecret = stripe.webhooks.generateTestHeaderString({
      payload: body,
      secret: "whsec_other",
      timestamp: now,
    });
    const expired = stripe.webhooks.generateTestHeaderString({
      payload: body,
      secret: WHSEC,
      timestamp: now - 301,
    });
    for (const [sent, header] of [
      [tampered, good],
      [body, wrongSecret],
      [body, expired],
    ] as const) {
      expect(stripeAccepts(sent, header)).toBe(false);
      expect(await post("stripe", sent, { "Stripe-Signature": header })).toMatchObject({
        status: 401,
        body: { error: "Invalid signature" },
      });
    }
  });

  it("Stripe: exactly 300 s old passes; during secret rotation one matching v1 among several passes", async () => {
    const body = '{"type":"charge.succeeded"}';
    const edge = stripe.webhooks.generateTestHeaderString({
      payload: body,
      secret: WHSEC,
      timestamp: nowSeconds() - 300,
    });
    expect(stripeAccepts(body, edge)).toBe(true);
    expect(await post("stripe", body, { "Stripe-Signature": edge })).toMatchObject({ status: 202 });
    const now = nowSeconds();
    const mac = hex(WHSEC, `${now}.${body}`);
    const rotated = `t=${now},v1=${"0".repeat(64)},v1=${mac},v0=${"1".repeat(64)}`;
    expect(stripeAccepts(body, rotated)).toBe(true);
    expect(await post("stripe", body, { "Stripe-Signature": rotated })).toMatchObject({ status: 202 });
    const onlyV0 = `t=${now},v0=${mac}`;
    expect(await post("stripe", body, { "Stripe-Signature": onlyV0 })).toMatchObject({ status: 401 });
  });

  it("generic V2 and Standard Webhooks: a timestamp exactly 300 s either side passes, 301 s is 401", async () => {
    const body = '{"n":1}';
    const now = nowSeconds();
    for (const [offset, status] of [
      [300, 202],
      [-300, 202],
      [301, 401],
      [-301, 401],
    ] as const) {
      const ts = String(now + offset);
      expect(
        await post("generic", body, {
          "X-Webhook-Signature-V2": hex(GENERIC, `${ts}.${body}`),
          "X-Webhook-Timestamp": ts,
        }),
        `V2 ${offset}`,
      ).toMatchObject({ status });
      const id = `msg_edge_${offset}`;
      const signature = new StandardWebhook(WHSEC).sign(id, new Date((now + offset) * 1000), body);
      expect(
        await post("sw", body, { "webhook-id": id, "webhook-timestamp": ts, "webhook-signature": signature }),
        `Standard Webhooks ${offset}`,
      ).toMatchObject({ status });
    }
  });

  it("generic V2 is never downgraded: a valid V1 beside a stale or timestamp-less V2 is 401", async () => {
    const body = "{}";
    const stale = String(nowSeconds() - 301);
    const v1 = hex(GENERIC, body);
    expect(
      await post("generic", body, {
        "X-Webhook-Signature-V2": hex(GENERIC, `${stale}.${body}`),
        "X-Webhook-Timestamp": stale,
        "X-Webhook-Signature": v1,
      }),
    ).toMatchObject({ status: 401, body: { error: "Invalid signature" } });
    expect(
      await post("generic", body, {
        "X-Webhook-Signature-V2": hex(GENERIC, body),
        "X-Webhook-Signature": v1,
      }),
    ).toMatchObject({ status: 401 });
    expect(await post("generic", body, { "X-Webhook-Signature": v1 })).toMatchObject({ status: 202 });
  });

  it("header names are case-insensitive for every scheme", async () => {
    const body = '{"c":1}';
    const ts = String(nowSeconds());
    const svix = new SvixWebhook(WHSEC).sign("msg_case", new Date(gw.clock.now()), body);
    const cases: Array<[string, Record<string, string>]> = [
      ["generic", { "x-hub-signature-256": await signGithub(GENERIC, body) }],
      ["generic", { "X-HUB-SIGNATURE-256": await signGithub(GENERIC, body) }],
      ["generic", { "X-GITLAB-TOKEN": GENERIC }],
      ["generic", { "x-webhook-signature-v2": hex(GENERIC, `${ts}.${body}`), "X-WEBHOOK-TIMESTAMP": ts }],
      ["sw", { "SVIX-ID": "msg_case", "Svix-Timestamp": ts, "SVIX-SIGNATURE": svix }],
      [
        "stripe",
        {
          "STRIPE-SIGNATURE": stripe.webhooks.generateTestHeaderString({
            payload: body,
            secret: WHSEC,
            timestamp: Number(ts),
          }),
        },
      ],
    ];
    for (const [route, headers] of cases) {
      expect(await post(route, body, headers), JSON.stringify(Object.keys(headers))).toMatchObject({
        status: 202,
      });
    }
  });

  it("Bitbucket: sha256=<hex> in X-Hub-Signature is checked, X-Event-Key names the event; GitHub's sha1 there is not a scheme", async () => {
    const body = JSON.stringify({ pullrequest: { id: 1, title: "Fix" } });
    const mac = `sha256=${hex(GENERIC, body)}`;
    expect(
      await post("bitbucket", body, {
        "X-Hub-Signature": mac,
        "X-Event-Key": "pullrequest:created",
        "X-Request-UUID": "bb-1",
      }),
    ).toMatchObject({
      status: 202,
      body: { status: "accepted", route: "bitbucket", event: "pullrequest:created", delivery_id: "bb-1" },
    });
    // Bitbucket Cloud retries keep X-Request-UUID (and count in X-Attempt-Number): a duplicate.
    expect(
      await post("bitbucket", body, {
        "X-Hub-Signature": mac,
        "X-Event-Key": "pullrequest:created",
        "X-Request-UUID": "bb-1",
        "X-Attempt-Number": "2",
      }),
    ).toMatchObject({ status: 200, body: { status: "duplicate" } });
    expect(
      await post("bitbucket", body, {
        "X-Hub-Signature": `sha256=${hex("wrong", body)}`,
        "X-Event-Key": "repo:refs_changed",
      }),
    ).toMatchObject({ status: 401, body: { error: "Invalid signature" } });
    expect(
      await post("bitbucket", body, { "X-Hub-Signature": mac, "X-Event-Key": "pullrequest:fulfilled" }),
    ).toMatchObject({ status: 200, body: { status: "ignored", event: "pullrequest:fulfilled" } });
    const sha1 = `sha1=${createHmac("sha1", GENERIC).update(body).digest("hex")}`;
    expect(await post("generic", body, { "X-Hub-Signature": sha1 })).toMatchObject({ status: 401 });
    // GitHub sends both: X-Hub-Signature-256 decides.
    expect(
      await post("generic", body, {
        "X-Hub-Signature": sha1,
        "X-Hub-Signature-256": await signGithub(GENERIC, body),
      }),
    ).toMatchObject({ status: 202 });
  });

  it("Bitbucket Data Center's Test connection (X-Event-Key: diagnostics:ping) is a ping: ignored even by a route with no events list", async () => {
    const body = JSON.stringify({ test: true });
    const headers = { "X-Hub-Signature": `sha256=${hex(GENERIC, body)}`, "X-Request-Id": "bbdc-ping-1" };
    expect(await post("generic", body, { ...headers, "X-Event-Key": "diagnostics:ping" })).toMatchObject({
      status: 200,
      body: { status: "ignored", event: "diagnostics:ping" },
    });
    const pingLines = gw.logs().filter((l) => l.msg.includes("ping event ignored"));
    expect(pingLines.some((l) => JSON.stringify(l).includes("diagnostics:ping"))).toBe(true);
    expect(pingLines.every((l) => l.level === 20)).toBe(true);
  });

  it("Netlify: the JWS its deploy notifications send in X-Webhook-Signature (HS256, iss netlify, sha256 of the body)", async () => {
    const deploy = (state: string) =>
      JSON.stringify({ id: "5ebc34bf4fea0b01f02efa3a", site_id: "fa4dd95a", state, branch: "main" });
    const signed = async (body: string, key = GENERIC) => ({
      "User-Agent": "Netlify",
      "X-Webhook-Signature": await new SignJWT({
        iss: "netlify",
        sha256: createHash("sha256").update(body).digest("hex"),
      })
        .setProtectedHeader({ alg: "HS256", typ: "JWT" })
        .sign(new TextEncoder().encode(key)),
    });
    const ready = deploy("ready");
    expect(await post("netlify", ready, await signed(ready))).toMatchObject({
      status: 202,
      body: { status: "accepted", route: "netlify" },
    });
    const building = deploy("building");
    expect(await post("netlify", building, await signed(building))).toMatchObject({
      status: 200,
      body: { status: "ignored", reason: "filter" },
    });
    expect(await post("netlify", ready, await signed(building))).toMatchObject({
      status: 401,
      body: { error: "Invalid signature" },
    });
    expect(await post("netlify", ready, await signed(ready, "another-secret"))).toMatchObject({
      status: 401,
    });
  });

  it("Standard Webhooks: a signature header sent twice (joined with ', ' on the way) still finds its v1 entry", async () => {
    const body = "{}";
    const ts = String(nowSeconds());
    const signature = new StandardWebhook(WHSEC).sign("msg_twice", new Date(gw.clock.now()), body);
    const answer = await rawHttp(gw.gateway.port, [
      `POST /webhooks/sw HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n` +
        `webhook-id: msg_twice\r\nwebhook-timestamp: ${ts}\r\n` +
        `webhook-signature: ${signature}\r\nwebhook-signature: v1,AAAA\r\n\r\n${body}`,
    ]);
    expect(answer.status).toBe(202);
    expect(JSON.parse(answer.body)).toMatchObject({ status: "accepted", delivery_id: "msg_twice" });
  });
});

describe("GitHub hooks with content type application/x-www-form-urlencoded (GitHub's form default)", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      config: webhookConfig(
        {
          prs: {
            secret: GENERIC,
            events: ["pull_request"],
            filters: [{ field: "action", equals: "opened" }],
          },
        },
        { rate_limit: 1000 },
      ),
    });
  });
  afterAll(() => gw.stop());

  const pullRequests = githubExamplesOf("pull_request");
  /** What GitHub sends: `payload=<urlencoded JSON>`, signed over exactly those bytes. */
  const sendForm = async (form: string, delivery: string) =>
    postJson(gw.url("/webhooks/prs"), form, {
      "content-type": "application/x-www-form-urlencoded",
      "X-GitHub-Event": "pull_request",
      "X-GitHub-Delivery": delivery,
      "X-Hub-Signature-256": await signGithub(GENERIC, form),
    });

  it("the JSON in the payload field is the event: events, filters and the delivery id work as for JSON", async () => {
    const opened = pullRequests?.find((e) => e.action === "opened");
    const closed = pullRequests?.find((e) => e.action === "closed");
    const form = (payload: unknown) => new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
    expect(await sendForm(form(opened), "form-1")).toMatchObject({
      status: 202,
      body: { status: "accepted", route: "prs", event: "pull_request", delivery_id: "form-1" },
    });
    expect(await sendForm(form(closed), "form-2")).toMatchObject({
      status: 200,
      body: { status: "ignored", reason: "filter" },
    });
  });

  it("plain JSON labelled as a form (what `curl -d '{...}'` sends) is still read as JSON", async () => {
    const opened = pullRequests?.find((e) => e.action === "opened");
    expect(await sendForm(JSON.stringify(opened), "form-curl")).toMatchObject({
      status: 202,
      body: { status: "accepted", event: "pull_request", delivery_id: "form-curl" },
    });
  });

  it("a form body without a payload field, or with bad JSON in it, is 400 Invalid JSON body", async () => {
    for (const form of ["action=opened", "payload=%7Bnot%20json"]) {
      expect(await sendForm(form, `bad-${form}`), form).toMatchObject({
        status: 400,
        body: { error: "Invalid JSON body" },
      });
    }
  });
});
