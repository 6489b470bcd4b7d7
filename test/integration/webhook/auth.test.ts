import { createHmac } from "node:crypto";
import { sign as signGithub } from "@octokit/webhooks-methods";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { Webhook as SvixWebhook } from "svix";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import githubVector from "../../fixtures/vectors/github-hmac-sha256.json" with { type: "json" };
import swVector from "../../fixtures/vectors/standard-webhooks.json" with { type: "json" };
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson, rawHttp } from "../../helpers/http.js";

const SECRET = "s3cret-for-tests";
const WHSEC = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
// A 32-byte key written without its base64 padding, as some dashboards show it: the libraries decode it.
const WHSEC_UNPADDED = `whsec_${Buffer.alloc(32, 7).toString("base64").replace(/=+$/, "")}`;
const hex = (key: string, text: string) => createHmac("sha256", key).update(text).digest("hex");

describe("authentication (spec 5) with the real signing libraries", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      config: webhookConfig(
        {
          hmac: {},
          own: { secret: "route-own-secret" },
          sw: { secret: WHSEC },
          swunpadded: { secret: WHSEC_UNPADDED },
          swraw: { secret: "plain-standard-secret" },
          // Base64 characters whose count leaves one over (9): the libraries sign with the first 8's bytes.
          swodd: { secret: "topsecret" },
          swoddwhsec: { secret: `${WHSEC}x` },
          vector: { secret: githubVector.secret },
          legacy: {},
          legacy2: {},
          open: { secret: "INSECURE_NO_AUTH" },
        },
        { secret: SECRET },
      ),
    });
  });
  afterAll(() => gw.stop());
  const post = (route: string, body: string, headers: Record<string, string>) =>
    postJson(gw.url(`/webhooks/${route}`), body, headers);
  const nowSeconds = () => Math.floor(gw.clock.now() / 1000);

  it("code-host HMAC: X-Hub-Signature-256 from @octokit/webhooks-methods is accepted; the global secret is the fallback", async () => {
    const body = JSON.stringify({ action: "opened" });
    expect(await post("hmac", body, { "X-Hub-Signature-256": await signGithub(SECRET, body) })).toMatchObject(
      { status: 202 },
    );
    expect(
      await post("hmac", body, { "X-Hub-Signature-256": await signGithub("wrong", body) }),
    ).toMatchObject({
      status: 401,
      body: { error: "Invalid signature" },
    });
  });

  it("a route's own secret replaces the global one", async () => {
    const body = "{}";
    expect(
      await post("own", body, { "X-Hub-Signature-256": await signGithub("route-own-secret", body) }),
    ).toMatchObject({ status: 202 });
    expect(await post("own", body, { "X-Hub-Signature-256": await signGithub(SECRET, body) })).toMatchObject({
      status: 401,
    });
  });

  it("GitHub's published test vector passes the signature check (then 400: the vector body is not JSON)", async () => {
    const res = await post("vector", githubVector.payload, { [githubVector.header]: githubVector.signature });
    expect(res).toMatchObject({ status: 400, body: { error: "Invalid JSON body" } });
  });

  it("token host: X-Alt-Forge-Token and X-Gitlab-Token must equal the secret exactly", async () => {
    expect(await post("hmac", "{}", { "X-Alt-Forge-Token": SECRET })).toMatchObject({ status: 202 });
    expect(await post("hmac", "{}", { "X-Gitlab-Token": SECRET })).toMatchObject({ status: 202 });
    expect(await post("hmac", "{}", { "X-Gitlab-Token": `${SECRET}x` })).toMatchObject({ status: 401 });
    expect(await post("hmac", "{}", { "X-Alt-Forge-Token": hex(SECRET, "{}") })).toMatchObject({
      status: 401,
    });
    // Exact: no case folding, and no prefix or part of the secret passes.
    for (const token of [SECRET.toUpperCase(), SECRET.slice(0, -1), `Bearer ${SECRET}`]) {
      expect(await post("hmac", "{}", { "X-Alt-Forge-Token": token })).toMatchObject({ status: 401 });
    }
  });

  it("Standard Webhooks: standardwebhooks-signed requests pass with whsec_ and raw secrets", async () => {
    const body = JSON.stringify({ type: "invoice.paid" });
    const at = new Date(gw.clock.now());
    const signed = new StandardWebhook(WHSEC).sign("msg_1", at, body);
    const headers = {
      "webhook-id": "msg_1",
      "webhook-timestamp": String(nowSeconds()),
      "webhook-signature": signed,
    };
    expect(await post("sw", body, headers)).toMatchObject({ status: 202, body: { delivery_id: "msg_1" } });
    const raw = new StandardWebhook("plain-standard-secret", { format: "raw" }).sign("msg_2", at, body);
    expect(
      await post("swraw", body, { ...headers, "webhook-id": "msg_2", "webhook-signature": raw }),
    ).toMatchObject({ status: 202 });
  });

  it("Standard Webhooks and Svix: a whsec_ key without its base64 padding verifies as the libraries sign with it", async () => {
    const body = JSON.stringify({ type: "invoice.paid" });
    const at = new Date(gw.clock.now());
    const standard = new StandardWebhook(WHSEC_UNPADDED).sign("msg_unpadded", at, body);
    expect(
      await post("swunpadded", body, {
        "webhook-id": "msg_unpadded",
        "webhook-timestamp": String(nowSeconds()),
        "webhook-signature": standard,
      }),
    ).toMatchObject({ status: 202 });
    const svix = new SvixWebhook(WHSEC_UNPADDED).sign("msg_unpadded_svix", at, body);
    expect(
      await post("swunpadded", body, {
        "svix-id": "msg_unpadded_svix",
        "svix-timestamp": String(nowSeconds()),
        "svix-signature": svix,
      }),
    ).toMatchObject({ status: 202 });
  });

  it("Standard Webhooks and Svix: a secret whose base64 leaves one character over verifies as the libraries sign with it", async () => {
    const body = JSON.stringify({ type: "invoice.paid" });
    const at = new Date(gw.clock.now());
    for (const [route, secret] of [
      ["swodd", "topsecret"],
      ["swoddwhsec", `${WHSEC}x`],
    ] as const) {
      const standard = new StandardWebhook(secret).sign(`msg_${route}`, at, body);
      expect(
        await post(route, body, {
          "webhook-id": `msg_${route}`,
          "webhook-timestamp": String(nowSeconds()),
          "webhook-signature": standard,
        }),
      ).toMatchObject({ status: 202 });
      const svix = new SvixWebhook(secret).sign(`msg_${route}_svix`, at, body);
      expect(
        await post(route, body, {
          "svix-id": `msg_${route}_svix`,
          "svix-timestamp": String(nowSeconds()),
          "svix-signature": svix,
        }),
      ).toMatchObject({ status: 202 });
      const other = new StandardWebhook("othersecret").sign(`msg_${route}_other`, at, body);
      expect(
        await post(route, body, {
          "webhook-id": `msg_${route}_other`,
          "webhook-timestamp": String(nowSeconds()),
          "webhook-signature": other,
        }),
      ).toMatchObject({ status: 401 });
    }
  });

  it("Standard Webhooks: several space-separated signatures, one valid, pass; none valid is 401", async () => {
    const body = "{}";
    const good = new StandardWebhook(WHSEC).sign("msg_3", new Date(gw.clock.now()), body);
    const headers = { "webhook-id": "msg_3", "webhook-timestamp": String(nowSeconds()) };
    expect(
      await post("sw", body, { ...headers, "webhook-signature": `v1,AAAA ${good} v2,BBBB` }),
    ).toMatchObject({ status: 202 });
    expect(
      await post("sw", body, {
        ...headers,
        "webhook-signature": "v1,AAAA v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=",
      }),
    ).toMatchObject({
      status: 401,
    });
  });

  it("Standard Webhooks: a timestamp more than 300 s away from the server clock is 401", async () => {
    const body = "{}";
    const old = new Date(gw.clock.now() - 301_000);
    const signed = new StandardWebhook(WHSEC).sign("msg_4", old, body);
    const headers = {
      "webhook-id": "msg_4",
      "webhook-timestamp": String(Math.floor(old.getTime() / 1000)),
      "webhook-signature": signed,
    };
    expect(await post("sw", body, headers)).toMatchObject({ status: 401 });
    const edge = new Date(gw.clock.now() - 299_000);
    const fresh = new StandardWebhook(WHSEC).sign("msg_5", edge, body);
    expect(
      await post("sw", body, {
        "webhook-id": "msg_5",
        "webhook-timestamp": String(Math.floor(edge.getTime() / 1000)),
        "webhook-signature": fresh,
      }),
    ).toMatchObject({ status: 202 });
  });

  it("Standard Webhooks published vector verifies (server clock set to the vector's time)", async () => {
    const clock = gw.clock.now();
    gw.clock.advance(swVector.timestamp * 1000 - clock);
    try {
      const res = await post("sw", swVector.payload, {
        "webhook-id": swVector.msgId,
        "webhook-timestamp": String(swVector.timestamp),
        "webhook-signature": swVector.signature,
      });
      expect(res).toMatchObject({ status: 202, body: { delivery_id: swVector.msgId } });
    } finally {
      gw.clock.advance(clock - gw.clock.now());
    }
  });

  it("svix-id / svix-timestamp / svix-signature from the svix library are accepted as Standard Webhooks aliases", async () => {
    const body = JSON.stringify({ type: "payment.succeeded" });
    const signed = new SvixWebhook(WHSEC).sign("msg_svix", new Date(gw.clock.now()), body);
    const headers = {
      "svix-id": "msg_svix",
      "svix-timestamp": String(nowSeconds()),
      "svix-signature": signed,
    };
    expect(await post("sw", body, headers)).toMatchObject({ status: 202, body: { delivery_id: "msg_svix" } });
  });

  it("a Svix retry (same svix-id, signed afresh with a later timestamp) 30 minutes on is a duplicate", async () => {
    const body = JSON.stringify({ type: "payment.succeeded", data: { id: "pay_retry" } });
    const send = () => {
      const at = new Date(gw.clock.now());
      return post("sw", body, {
        "svix-id": "msg_svix_retry",
        "svix-timestamp": String(nowSeconds()),
        "svix-signature": new SvixWebhook(WHSEC).sign("msg_svix_retry", at, body),
      });
    };
    expect(await send()).toMatchObject({ status: 202, body: { delivery_id: "msg_svix_retry" } });
    // Svix retries after 5 s, 5 min, 30 min, ...: each attempt carries its own timestamp and signature.
    gw.clock.advance(30 * 60_000);
    expect(await send()).toMatchObject({ status: 200, body: { status: "duplicate" } });
  });

  it("generic V2: hex HMAC of <timestamp>.<body> within 300 s; stale or missing timestamp is 401", async () => {
    const body = '{"x":1}';
    const ts = String(nowSeconds());
    expect(
      await post("hmac", body, {
        "X-Webhook-Signature-V2": hex(SECRET, `${ts}.${body}`),
        "X-Webhook-Timestamp": ts,
      }),
    ).toMatchObject({ status: 202 });
    const stale = String(nowSeconds() - 301);
    expect(
      await post("hmac", body, {
        "X-Webhook-Signature-V2": hex(SECRET, `${stale}.${body}`),
        "X-Webhook-Timestamp": stale,
      }),
    ).toMatchObject({
      status: 401,
    });
    expect(
      await post("hmac", body, { "X-Webhook-Signature-V2": hex(SECRET, `${ts}.${body}`) }),
    ).toMatchObject({ status: 401 });
  });

  it("generic V2 is never downgraded to V1: a bad V2 with a valid V1 beside it is 401", async () => {
    const body = "{}";
    const ts = String(nowSeconds());
    const res = await post("hmac", body, {
      "X-Webhook-Signature-V2": "00".repeat(32),
      "X-Webhook-Timestamp": ts,
      "X-Webhook-Signature": hex(SECRET, body),
    });
    expect(res).toMatchObject({ status: 401 });
  });

  it("generic V1 passes and logs the deprecation warning once per route", async () => {
    const body = "{}";
    for (let i = 0; i < 3; i++) {
      expect(await post("legacy", body, { "X-Webhook-Signature": hex(SECRET, body) })).toMatchObject({
        status: 202,
      });
    }
    expect(await post("legacy2", body, { "X-Webhook-Signature": hex(SECRET, body) })).toMatchObject({
      status: 202,
    });
    const warnings = gw.logs().filter((l) => l.level === 40 && l.msg.includes("deprecated generic V1"));
    expect(warnings.map((l) => l.msg.split(":")[0])).toEqual(["[webhook] legacy", "[webhook] legacy2"]);
  });

  it("the V1 deprecation warning stays once per route across a reload of config.yaml (SIGHUP)", async () => {
    const body = '{"after":"reload"}';
    const warned = () =>
      gw
        .logs()
        .filter((l) => l.level === 40 && l.msg.startsWith("[webhook] legacy: sender uses the deprecated"));
    expect(await post("legacy", body, { "X-Webhook-Signature": hex(SECRET, body) })).toMatchObject({
      status: 202,
    });
    const before = warned().length;
    expect(before).toBe(1);
    gw.gateway.reload();
    expect(await post("legacy", body, { "X-Webhook-Signature": hex(SECRET, body) })).toMatchObject({
      status: 202,
    });
    expect(warned()).toHaveLength(before);
  });

  it("no recognized signature header with a secret configured is 401", async () => {
    expect(await post("hmac", "{}", {})).toMatchObject({ status: 401, body: { error: "Invalid signature" } });
  });

  it("INSECURE_NO_AUTH skips the check: unsigned, or signed with any key by any scheme", async () => {
    expect(await post("open", "{}", {})).toMatchObject({ status: 202 });
    const body = '{"signed":"with another key"}';
    const ts = String(nowSeconds());
    for (const headers of [
      { "X-Hub-Signature-256": await signGithub("not-the-route-key", body) },
      { "X-Webhook-Signature-V2": hex("not-the-route-key", `${ts}.${body}`), "X-Webhook-Timestamp": ts },
      { "X-Alt-Forge-Token": "not-the-route-key" },
    ])
      expect(await post("open", body, headers)).toMatchObject({ status: 202, body: { status: "accepted" } });
  });

  it("malformed and non-ASCII signature headers are 401, never 500", async () => {
    for (const value of ["sha256=", "sha256=zz", "md5=abc", `sha256=${"a".repeat(63)}`]) {
      expect(await post("hmac", "{}", { "X-Hub-Signature-256": value })).toMatchObject({ status: 401 });
    }
    expect(
      await post("sw", "{}", {
        "webhook-id": "m",
        "webhook-timestamp": "soon",
        "webhook-signature": "v1,!!",
      }),
    ).toMatchObject({ status: 401 });
    const head = Buffer.concat([
      Buffer.from(
        "POST /webhooks/hmac HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nX-Hub-Signature-256: sha256=",
      ),
      Buffer.from("ü€".repeat(20), "utf8"),
      Buffer.from("\r\n\r\n{}"),
    ]);
    const answer = await rawHttp(gw.gateway.port, [head]);
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body)).toEqual({ error: "Invalid signature" });
  });

  it("no log line carries a secret", () => {
    const text = JSON.stringify(gw.logs());
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
  });
});

describe("INSECURE_NO_AUTH only on loopback binds (spec 5 rule 4) across a SIGHUP reload", () => {
  it("a reload to host 127.0.0.1 with INSECURE_NO_AUTH is refused while the listener is still on 0.0.0.0", async () => {
    const gw = await startTestGateway({
      config: webhookConfig({ r: { secret: SECRET } }, { host: "0.0.0.0" }),
    });
    try {
      expect((await postJson(gw.url("/webhooks/r"), {})).status).toBe(401);
      gw.home.write(
        "config.yaml",
        stringify(webhookConfig({ r: { secret: "INSECURE_NO_AUTH" } }, { host: "127.0.0.1" })),
      );
      expect(() => gw.gateway.reload()).toThrow(/INSECURE_NO_AUTH is only allowed on a loopback bind/);
      // Named as the address bound, not as the file's host, which now reads 127.0.0.1.
      expect(() => gw.gateway.reload()).toThrow(
        "but the gateway listens on 0.0.0.0, the host it started with (a change of host takes effect after a restart) — set a real secret or bind to 127.0.0.1",
      );
      // The running routes are kept: still signed-only on the public listener.
      expect(await postJson(gw.url("/webhooks/r"), {})).toMatchObject({
        status: 401,
        body: { error: "Invalid signature" },
      });
    } finally {
      await gw.stop();
    }
  });
});
