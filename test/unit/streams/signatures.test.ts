import { createHash, createHmac, sign as cryptoSign, generateKeyPairSync, type KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";
import { sign as octokitSign } from "@octokit/webhooks-methods";
import fc from "fast-check";
import { SignJWT } from "jose";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { Webhook as SvixWebhook } from "svix";
import { describe, expect, it } from "vitest";
import { checkHexHmac } from "../../../src/streams/signatureChecks.js";
import { verifySignature } from "../../../src/streams/signatures.js";

const vectors = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../fixtures/vectors/${name}`, import.meta.url), "utf8"));
const github = vectors("github-hmac-sha256.json") as {
  secret: string;
  payload: string;
  header: string;
  signature: string;
};
const stdwh = vectors("standard-webhooks.json") as {
  secret: string;
  msgId: string;
  timestamp: number;
  payload: string;
  signature: string;
  otherSignatures: string[];
};

const NOW = 1_700_000_000;
const SECRET = "route-secret-\u00e9t\u00e9";
const hex = (key: string | Buffer, data: string | Buffer) =>
  createHmac("sha256", key).update(data).digest("hex");
const check = (headers: Record<string, string>, body: Buffer | string, secret = SECRET, nowSeconds = NOW) =>
  verifySignature({ headers, body: Buffer.isBuffer(body) ? body : Buffer.from(body), secret, nowSeconds });
const flipByte = (body: Uint8Array, index: number, mask: number) => {
  const copy = Buffer.from(body);
  const i = index % copy.length;
  copy[i] = (copy[i] ?? 0) ^ mask;
  return copy;
};

describe("forge HMAC (X-Hub-Signature-256)", () => {
  it("accepts GitHub's documented test vector", () => {
    expect(check({ [github.header]: github.signature }, github.payload, github.secret)).toEqual({
      ok: true,
      scheme: "forge_hmac",
    });
  });

  it("compares the hex digest case-insensitively", () => {
    const upper = `sha256=${github.signature.slice(7).toUpperCase()}`;
    expect(check({ "x-hub-signature-256": upper }, github.payload, github.secret).ok).toBe(true);
  });

  it("rejects a wrong secret, a missing sha256= prefix and a truncated digest", () => {
    expect(check({ "x-hub-signature-256": github.signature }, github.payload, "other").ok).toBe(false);
    expect(
      check({ "x-hub-signature-256": github.signature.slice(7) }, github.payload, github.secret).ok,
    ).toBe(false);
    expect(
      check({ "x-hub-signature-256": github.signature.slice(0, -2) }, github.payload, github.secret).ok,
    ).toBe(false);
  });

  it("a hex digest matches only as 64 ASCII hex digits: no wide character Node's hex decoder reads by its low byte", () => {
    const digest = github.signature.slice(7);
    const expected = Buffer.from(digest, "hex");
    expect(checkHexHmac(digest, expected)).toBe(true);
    for (const at of [0, 31, 63]) {
      const char = digest.charCodeAt(at);
      // U+06xx whose low byte is the digit itself (U+0663 decodes as "c"), and the full-width form.
      for (const wide of [0x0600 | char, 0xff00 | (char - 0x20)]) {
        const forged = digest.slice(0, at) + String.fromCharCode(wide) + digest.slice(at + 1);
        expect(checkHexHmac(forged, expected), `${at}: U+${wide.toString(16)}`).toBe(false);
      }
    }
    expect(checkHexHmac(`${digest.slice(0, 62)}zz`, expected)).toBe(false);
    expect(checkHexHmac(digest.slice(0, 62), expected)).toBe(false);
  });

  it("accepts any body signed by @octokit/webhooks-methods and rejects any single-byte change", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ minLength: 1 }),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        async (body, at, mask) => {
          const signature = await octokitSign(SECRET, body);
          const bytes = Buffer.from(body);
          expect(check({ "x-hub-signature-256": signature }, bytes)).toEqual({
            ok: true,
            scheme: "forge_hmac",
          });
          expect(check({ "x-hub-signature-256": signature }, flipByte(bytes, at, mask)).ok).toBe(false);
        },
      ),
      { numRuns: 100 },
    );
  });

  it("checks each of many routes' secrets with its own key, also after the kept key bytes are emptied", async () => {
    // More secrets than the key bytes kept (256), each checked twice, interleaved: a key of another
    // secret, or of a secret emptied from the cache, would match nothing.
    const secrets = Array.from({ length: 600 }, (_, i) => `secret-${i}-\u00e9`);
    for (const round of [0, 1]) {
      for (const [i, secret] of secrets.entries()) {
        const body = `{"n":${i},"round":${round}}`;
        const signature = await octokitSign(secret, body);
        expect(check({ "x-hub-signature-256": signature }, body, secret).ok, `${round} ${i}`).toBe(true);
        const other = secrets[(i + 1) % secrets.length] as string;
        expect(check({ "x-hub-signature-256": signature }, body, other).ok).toBe(false);
      }
    }
  });
});

describe("token host (X-Alt-Forge-Token / X-Gitlab-Token)", () => {
  it("accepts the exact secret under either header name", () => {
    expect(check({ "x-alt-forge-token": "alt-token" }, "{}", "alt-token")).toEqual({
      ok: true,
      scheme: "token",
    });
    expect(check({ "x-gitlab-token": "plain-token" }, "{}", "plain-token")).toEqual({
      ok: true,
      scheme: "token",
    });
  });

  it("rejects prefixes, extensions and case changes of the secret", () => {
    for (const sent of ["plain-toke", "plain-token ", "PLAIN-TOKEN", ""]) {
      expect(check({ "x-gitlab-token": sent }, "{}", "plain-token").ok).toBe(false);
    }
  });

  it("is not an HMAC: a token equal to the body's HMAC is rejected", () => {
    expect(check({ "x-gitlab-token": hex("plain-token", "{}") }, "{}", "plain-token").ok).toBe(false);
  });
});

describe("Standard Webhooks (webhook-* and svix-* headers)", () => {
  const vectorHeaders = (signature: string) => ({
    "webhook-id": stdwh.msgId,
    "webhook-timestamp": String(stdwh.timestamp),
    "webhook-signature": signature,
  });

  it("accepts the Standard Webhooks specification's signing vector", () => {
    expect(check(vectorHeaders(stdwh.signature), stdwh.payload, stdwh.secret, stdwh.timestamp)).toEqual({
      ok: true,
      scheme: "standard_webhooks",
    });
  });

  it("accepts when any one of several space-separated entries matches, ignoring non-v1 entries", () => {
    const header = [...stdwh.otherSignatures, stdwh.signature, stdwh.otherSignatures[0]].join(" ");
    expect(check(vectorHeaders(header), stdwh.payload, stdwh.secret, stdwh.timestamp).ok).toBe(true);
    expect(
      check(vectorHeaders(stdwh.otherSignatures.join(" ")), stdwh.payload, stdwh.secret, stdwh.timestamp).ok,
    ).toBe(false);
    const asV2 = stdwh.signature.replace("v1,", "v2,");
    expect(check(vectorHeaders(asV2), stdwh.payload, stdwh.secret, stdwh.timestamp).ok).toBe(false);
  });

  it("enforces the 300 s tolerance in both directions, inclusive", () => {
    const at = (now: number) => check(vectorHeaders(stdwh.signature), stdwh.payload, stdwh.secret, now).ok;
    expect(at(stdwh.timestamp + 300)).toBe(true);
    expect(at(stdwh.timestamp - 300)).toBe(true);
    expect(at(stdwh.timestamp + 301)).toBe(false);
    expect(at(stdwh.timestamp - 301)).toBe(false);
  });

  it("rejects a missing id, timestamp or signature and a non-numeric timestamp", () => {
    const full = vectorHeaders(stdwh.signature);
    for (const name of Object.keys(full)) {
      const partial: Record<string, string> = { ...full };
      delete partial[name];
      expect(check(partial, stdwh.payload, stdwh.secret, stdwh.timestamp).ok).toBe(false);
    }
    const bad = { ...full, "webhook-timestamp": "1614265330.5" };
    expect(check(bad, stdwh.payload, stdwh.secret, stdwh.timestamp).ok).toBe(false);
  });

  it("uses a whsec_ secret as base64 key bytes; a whsec_ secret that is not base64 matches nothing signed with a base64 key", () => {
    const raw = `whsec_${stdwh.secret.slice(6)}`;
    expect(check(vectorHeaders(stdwh.signature), stdwh.payload, raw, stdwh.timestamp).ok).toBe(true);
    expect(
      check(vectorHeaders(stdwh.signature), stdwh.payload, "whsec_not*base64!", stdwh.timestamp).ok,
    ).toBe(false);
  });

  it("like the reference libraries, base64-decodes a secret pasted without its whsec_ prefix", () => {
    const bare = stdwh.secret.slice("whsec_".length);
    expect(check(vectorHeaders(stdwh.signature), stdwh.payload, bare, stdwh.timestamp)).toEqual({
      ok: true,
      scheme: "standard_webhooks",
    });
    const body = JSON.stringify({ type: "invoice.paid" });
    const headers = {
      "webhook-id": "msg_bare",
      "webhook-timestamp": String(NOW),
      "webhook-signature": new StandardWebhook(bare).sign("msg_bare", new Date(NOW * 1000), body),
    };
    expect(check(headers, body, bare).ok).toBe(true);
    // Another key: two characters more are a byte more (one more character alone adds no byte, below).
    expect(check(headers, body, `${bare}xy`).ok).toBe(false);
  });

  it("decodes a secret's base64 as the reference libraries do: any count of characters (one left over adds no byte), up to two '='", () => {
    const BASE64_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".split("");
    const body = '{"type":"x"}';
    const date = new Date(NOW * 1000);
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...BASE64_CHARS), { minLength: 4, maxLength: 64 }),
        fc.constantFrom("", "=", "=="),
        fc.boolean(),
        (chars, padding, prefixed) => {
          const secret = `${prefixed ? "whsec_" : ""}${chars.join("")}${padding}`;
          for (const [signer, prefix] of [
            [new StandardWebhook(secret), "webhook-"],
            [new SvixWebhook(secret), "svix-"],
          ] as const) {
            const headers = {
              [`${prefix}id`]: "msg_lib",
              [`${prefix}timestamp`]: String(NOW),
              [`${prefix}signature`]: signer.sign("msg_lib", date, body),
            };
            expect(check(headers, body, secret)).toEqual({ ok: true, scheme: "standard_webhooks" });
          }
        },
      ),
      { numRuns: 300 },
    );
    // A single character encodes no byte: no empty key (an HMAC anyone can compute) comes of it.
    const emptyKey = `v1,${createHmac("sha256", Buffer.alloc(0)).update(`msg_e.${NOW}.${body}`).digest("base64")}`;
    const sent = { "webhook-id": "msg_e", "webhook-timestamp": String(NOW), "webhook-signature": emptyKey };
    for (const secret of ["whsec_A", "whsec_A=", "whsec_A=="])
      expect(check(sent, body, secret).ok).toBe(false);
  });

  it("with a whsec_ secret, accepts only the base64-decoded key (standardwebhooks, svix), never the UTF-8 text of the whole string", () => {
    const body = '{"a":1}';
    const date = new Date(NOW * 1000);
    const byText = (secret: string) =>
      `v1,${createHmac("sha256", secret).update(`msg_text.${NOW}.${body}`).digest("base64")}`;
    const headers = (signature: string) => ({
      "webhook-id": "msg_text",
      "webhook-timestamp": String(NOW),
      "webhook-signature": signature,
    });
    const libraries = [
      new StandardWebhook(stdwh.secret).sign("msg_text", date, body),
      new SvixWebhook(stdwh.secret).sign("msg_text", date, body),
    ];
    for (const signature of libraries) expect(check(headers(signature), body, stdwh.secret).ok).toBe(true);
    expect(check(headers(byText(stdwh.secret)), body, stdwh.secret)).toEqual({
      ok: false,
      reason: "webhook-signature has no matching v1 entry",
    });
    expect(check(headers(byText("whsec_not*base64!")), body, "whsec_not*base64!")).toEqual({
      ok: false,
      reason: "the route secret starts with whsec_ but the rest is not base64",
    });
    // The reference libraries agree: the text-keyed signature is not theirs.
    expect(() => new StandardWebhook(stdwh.secret).verify(body, headers(byText(stdwh.secret)))).toThrow();
  });

  it("without the whsec_ prefix, still accepts a signature keyed with the secret's UTF-8 text (hand-rolled senders)", () => {
    const body = '{"a":1}';
    const signed = `msg_text.${NOW}.${body}`;
    for (const secret of ["plain-secret", stdwh.secret.slice("whsec_".length)]) {
      const signature = `v1,${createHmac("sha256", secret).update(signed).digest("base64")}`;
      const headers = {
        "webhook-id": "msg_text",
        "webhook-timestamp": String(NOW),
        "webhook-signature": signature,
      };
      expect(check(headers, body, secret).ok).toBe(true);
      expect(check(headers, body, `${secret}x`).ok).toBe(false);
    }
  });

  // The library signs text (it decodes a Buffer as UTF-8 first), so bodies here are strings.
  it("accepts any body signed by the standardwebhooks library (whsec_ and raw secrets)", () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 512 }),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        (body, at, mask) => {
          const bytes = Buffer.from(body);
          const date = new Date(NOW * 1000);
          for (const [secret, signer] of [
            [stdwh.secret, new StandardWebhook(stdwh.secret)],
            [SECRET, new StandardWebhook(Buffer.from(SECRET, "utf8"), { format: "raw" })],
          ] as const) {
            const headers = {
              "webhook-id": "msg_1",
              "webhook-timestamp": String(NOW),
              "webhook-signature": signer.sign("msg_1", date, bytes),
            };
            expect(check(headers, bytes, secret)).toEqual({ ok: true, scheme: "standard_webhooks" });
            expect(check(headers, flipByte(bytes, at, mask), secret).ok).toBe(false);
          }
        },
      ),
      { numRuns: 100 },
    );
  });

  it("accepts Svix-signed requests under the svix-* header aliases", () => {
    const secret = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
    const body = JSON.stringify({ type: "invoice.paid", data: { id: "in_1" } });
    const signature = new SvixWebhook(secret).sign("msg_svix", new Date(NOW * 1000), body);
    const headers = { "svix-id": "msg_svix", "svix-timestamp": String(NOW), "svix-signature": signature };
    expect(check(headers, body, secret)).toEqual({ ok: true, scheme: "standard_webhooks" });
    expect(check({ ...headers, "svix-id": "msg_other" }, body, secret).ok).toBe(false);
  });
});

describe("generic V2 and V1", () => {
  const body = '{"hello":"world"}';
  const v2 = (ts: number | string) => ({
    "x-webhook-signature-v2": hex(SECRET, `${ts}.${body}`),
    "x-webhook-timestamp": String(ts),
  });

  it("accepts V2 within 300 s both ways and rejects outside or without a timestamp", () => {
    expect(check(v2(NOW), body)).toEqual({ ok: true, scheme: "generic_v2" });
    expect(check(v2(NOW - 300), body).ok).toBe(true);
    expect(check(v2(NOW + 300), body).ok).toBe(true);
    expect(check(v2(NOW - 301), body).ok).toBe(false);
    expect(check(v2(NOW + 301), body).ok).toBe(false);
    const { "x-webhook-timestamp": _, ...noTimestamp } = v2(NOW);
    expect(check(noTimestamp, body).ok).toBe(false);
    expect(check({ ...v2(NOW), "x-webhook-timestamp": "soon" }, body).ok).toBe(false);
  });

  it("accepts any byte body with a valid V2 or V1 signature (either hex case) and rejects any single-byte change", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 512 }),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        fc.boolean(),
        (raw, at, mask, upper) => {
          const bytes = Buffer.from(raw);
          const cased = (h: string) => (upper ? h.toUpperCase() : h);
          const signedV2 = createHmac("sha256", SECRET).update(`${NOW}.`).update(bytes).digest("hex");
          const v2Headers = { "x-webhook-signature-v2": cased(signedV2), "x-webhook-timestamp": String(NOW) };
          const v1Headers = { "x-webhook-signature": cased(hex(SECRET, bytes)) };
          expect(check(v2Headers, bytes)).toEqual({ ok: true, scheme: "generic_v2" });
          expect(check(v1Headers, bytes)).toEqual({ ok: true, scheme: "generic_v1" });
          expect(check(v2Headers, flipByte(bytes, at, mask)).ok).toBe(false);
          expect(check(v1Headers, flipByte(bytes, at, mask)).ok).toBe(false);
        },
      ),
      { numRuns: 100 },
    );
  });

  it("still judges V2 when the sender adds webhook-id / svix-id as a delivery ID", () => {
    expect(
      check({ ...v2(NOW), "webhook-id": "d-1", "svix-id": "d-1", "svix-timestamp": String(NOW) }, body),
    ).toEqual({
      ok: true,
      scheme: "generic_v2",
    });
  });

  it("never downgrades a bad V2 to a valid V1 signature", () => {
    const headers = { ...v2(NOW - 1000), "x-webhook-signature": hex(SECRET, body) };
    expect(check(headers, body).ok).toBe(false);
    expect(check({ "x-webhook-signature": hex(SECRET, body) }, body)).toEqual({
      ok: true,
      scheme: "generic_v1",
    });
  });

  it("rejects V1 over a different body and V2 whose timestamp was altered", () => {
    expect(check({ "x-webhook-signature": hex(SECRET, body) }, `${body} `).ok).toBe(false);
    expect(check({ ...v2(NOW), "x-webhook-timestamp": String(NOW + 1) }, body).ok).toBe(false);
  });

  it("accepts the digest with GitHub's sha256= prefix, as generic senders often write it; the digest still decides", () => {
    const v1 = `sha256=${hex(SECRET, body)}`;
    expect(check({ "x-webhook-signature": v1 }, body)).toEqual({ ok: true, scheme: "generic_v1" });
    expect(
      check({ ...v2(NOW), "x-webhook-signature-v2": `sha256=${v2(NOW)["x-webhook-signature-v2"]}` }, body),
    ).toEqual({ ok: true, scheme: "generic_v2" });
    expect(check({ "x-webhook-signature": v1 }, `${body} `).ok).toBe(false);
    expect(check({ "x-webhook-signature": `sha1=${hex(SECRET, body)}` }, body).ok).toBe(false);
    expect(check({ "x-webhook-signature": `sha256=sha256=${hex(SECRET, body)}` }, body).ok).toBe(false);
    expect(check({ "x-webhook-signature": "sha256=" }, body).ok).toBe(false);
  });
});

describe("header families and malformed input", () => {
  it("rejects a request with no recognized header and an empty secret", () => {
    expect(check({ "content-type": "application/json" }, "{}").ok).toBe(false);
    expect(check({ "x-gitlab-token": "" }, "{}", "").ok).toBe(false);
  });

  it("judges only the first family present: a bad hub signature is not rescued by a valid token", () => {
    expect(check({ "x-hub-signature-256": "sha256=00", "x-gitlab-token": SECRET }, "{}").ok).toBe(false);
    expect(check({ "x-gitlab-token": "nope", "x-webhook-signature": hex(SECRET, "{}") }, "{}").ok).toBe(
      false,
    );
  });

  it("a token that does not match is rescued only by a Standard Webhooks signature beside it (GitLab's signing token)", () => {
    const key = Buffer.from("gitlab-signing-key-32-bytes-long");
    const secret = `whsec_${key.toString("base64")}`;
    const sw = (id: string, body: string, signingKey = key) => ({
      "webhook-id": id,
      "webhook-timestamp": String(NOW),
      "webhook-signature": `v1,${createHmac("sha256", signingKey).update(`${id}.${NOW}.${body}`).digest("base64")}`,
    });
    expect(check({ "x-gitlab-token": "legacy", ...sw("m1", "{}") }, "{}", secret)).toEqual({
      ok: true,
      scheme: "standard_webhooks",
    });
    expect(check({ "x-alt-forge-token": "legacy", ...sw("m1", "{}") }, "{}", secret).ok).toBe(true);
    expect(check({ "x-gitlab-token": "legacy", ...sw("m1", "{}") }, "{ }", secret).ok).toBe(false);
    expect(check({ "x-gitlab-token": "legacy", ...sw("m1", "{}", Buffer.from("x")) }, "{}", secret).ok).toBe(
      false,
    );
    expect(check({ "x-gitlab-token": secret, ...sw("m1", "{}", Buffer.from("x")) }, "{}", secret)).toEqual({
      ok: true,
      scheme: "token",
    });
  });

  it("rejects non-ASCII header values, even a token equal to a non-ASCII secret", () => {
    expect(check({ "x-gitlab-token": SECRET }, "{}").ok).toBe(false);
    expect(check({ "x-hub-signature-256": `sha256=${hex(SECRET, "{}")}\u00a0` }, "{}").ok).toBe(false);
  });

  it("never throws and never echoes the secret, whatever the headers hold", () => {
    const names = fc.constantFrom(
      "x-hub-signature-256",
      "x-alt-forge-token",
      "x-gitlab-token",
      "webhook-id",
      "webhook-timestamp",
      "webhook-signature",
      "svix-id",
      "svix-timestamp",
      "svix-signature",
      "x-webhook-signature-v2",
      "x-webhook-timestamp",
      "x-webhook-signature",
      "stripe-signature",
      "linear-signature",
      "sentry-hook-signature",
      "x-pagerduty-signature",
      "x-shopify-hmac-sha256",
      "paddle-signature",
      "x-signature",
      "x-gitea-signature",
      "x-gogs-signature",
      "authorization",
    );
    const values = fc.oneof(
      fc.string(),
      fc.string({ unit: "binary" }),
      fc.constantFrom("v1,", "sha256=", "v1,====", " v1,a", "Bearer ", "Basic ", "Basic Og==", "t=,v1="),
    );
    fc.assert(
      fc.property(
        fc.dictionary(names, values),
        fc.uint8Array(),
        fc.string(),
        fc.double(),
        (headers, body, secret, now) => {
          const marked = `S3CR3T${secret}`;
          const result = verifySignature({
            headers,
            body: Buffer.from(body),
            secret: marked,
            nowSeconds: now,
          });
          if (!result.ok) expect(result.reason).not.toContain("S3CR3T");
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("Stripe (Stripe-Signature, a real payment sender)", () => {
  const secret = "whsec_stripe_test_secret";
  const body = '{"id":"evt_1","type":"invoice.paid"}';
  const header = (t: number, ...sigs: string[]) => `t=${t},${sigs.map((s) => `v1=${s}`).join(",")}`;

  it("accepts t=<unix>,v1=<hex HMAC of '<t>.<body>'> keyed by the whole whsec_ string", () => {
    const sig = hex(secret, `${NOW}.${body}`);
    expect(check({ "stripe-signature": header(NOW, sig) }, body, secret)).toEqual({
      ok: true,
      scheme: "stripe",
    });
  });

  it("accepts when any of several v1 entries matches (secret rotation)", () => {
    const good = hex(secret, `${NOW}.${body}`);
    expect(check({ "stripe-signature": header(NOW, "ab".repeat(32), good) }, body, secret).ok).toBe(true);
  });

  it("rejects a changed body, a wrong secret and a timestamp outside 300 s", () => {
    const sig = hex(secret, `${NOW}.${body}`);
    expect(check({ "stripe-signature": header(NOW, sig) }, `${body} `, secret).ok).toBe(false);
    expect(check({ "stripe-signature": header(NOW, sig) }, body, "whsec_other").ok).toBe(false);
    const old = NOW - 301;
    expect(check({ "stripe-signature": header(old, hex(secret, `${old}.${body}`)) }, body, secret).ok).toBe(
      false,
    );
  });

  it("rejects a header without a timestamp or without v1 entries", () => {
    expect(check({ "stripe-signature": `v1=${hex(secret, `${NOW}.${body}`)}` }, body, secret).ok).toBe(false);
    expect(check({ "stripe-signature": `t=${NOW},v0=abc` }, body, secret).ok).toBe(false);
  });
});

describe("Linear (Linear-Signature, an issue tracker sender)", () => {
  const secret = "lin_wh_test_signing_secret";
  const at = (ms: number) => JSON.stringify({ action: "create", type: "Issue", webhookTimestamp: ms });

  it("accepts the hex HMAC-SHA256 of the raw body with webhookTimestamp (ms) inside 300 s", () => {
    for (const ms of [NOW * 1000, (NOW - 300) * 1000, (NOW + 300) * 1000]) {
      const body = at(ms);
      expect(check({ "linear-signature": hex(secret, body) }, body, secret)).toEqual({
        ok: true,
        scheme: "linear",
      });
    }
    const noTimestamp = '{"type":"Issue"}';
    expect(check({ "linear-signature": hex(secret, noTimestamp) }, noTimestamp, secret).ok).toBe(true);
  });

  it("judges webhookTimestamp in whole seconds, as the other schemes' timestamps: 300 s away in either direction passes, 301 s does not", () => {
    // The gateway's clock is read in whole seconds; a millisecond time within second NOW + 300 (or NOW - 300)
    // is exactly 300 s away, as a Stripe `t=` of that second is.
    for (const ms of [(NOW + 300) * 1000 + 999, (NOW + 300) * 1000 + 1, (NOW - 300) * 1000 + 999]) {
      const body = at(ms);
      expect(check({ "linear-signature": hex(secret, body) }, body, secret).ok, String(ms)).toBe(true);
    }
    for (const ms of [(NOW + 301) * 1000, (NOW - 300) * 1000 - 1]) {
      const body = at(ms);
      expect(check({ "linear-signature": hex(secret, body) }, body, secret).ok, String(ms)).toBe(false);
    }
  });

  it("rejects a changed body, a wrong secret, a stale or non-numeric webhookTimestamp", () => {
    const body = at(NOW * 1000);
    expect(check({ "linear-signature": hex(secret, body) }, `${body} `, secret).ok).toBe(false);
    expect(check({ "linear-signature": hex("other", body) }, body, secret).ok).toBe(false);
    for (const stale of [
      at((NOW - 301) * 1000),
      at((NOW + 301) * 1000),
      '{"webhookTimestamp":"1700000000000"}',
    ]) {
      const result = check({ "linear-signature": hex(secret, stale) }, stale, secret);
      expect(result.ok, stale).toBe(false);
    }
  });
});

describe("a Linear delivery's digest under another header that signs the body alone", () => {
  const secret = "lin_wh_test_signing_secret";
  const at = (ms: number) => JSON.stringify({ action: "create", type: "Issue", webhookTimestamp: ms });
  // The same hex HMAC-SHA256 of the body, sent as each of these schemes sends it.
  const headersFor = (digest: string): Record<string, string>[] => [
    { "x-hub-signature-256": `sha256=${digest}` },
    { "x-hub-signature": `sha256=${digest}` },
    { "x-gitea-signature": digest },
    { "x-webhook-signature": digest },
    { "sentry-hook-signature": digest },
    { "x-pagerduty-signature": `v1=${digest}` },
    { "x-shopify-hmac-sha256": Buffer.from(digest, "hex").toString("base64") },
    { "x-grafana-alerting-signature": digest },
    { "x-signature": digest },
  ];

  it("is refused when its webhookTimestamp is outside 300 s, as under Linear-Signature: no replay by renaming the header", () => {
    for (const body of [at((NOW - 3600) * 1000), at((NOW + 301) * 1000)])
      for (const headers of headersFor(hex(secret, body))) {
        const result = check(headers, body, secret);
        expect(result, JSON.stringify(headers)).toMatchObject({ ok: false });
        expect((result as { reason: string }).reason).toMatch(/webhookTimestamp is more than 300 s/);
      }
  });

  it("passes inside 300 s, and a webhookTimestamp that is no number (not Linear's) is not judged", () => {
    for (const body of [at(NOW * 1000), '{"webhookTimestamp":"2024-01-01T00:00:00Z"}'])
      for (const headers of headersFor(hex(secret, body)))
        expect(check(headers, body, secret).ok, `${JSON.stringify(headers)} ${body}`).toBe(true);
  });
});

describe("Authorization (monitors that cannot sign: Alertmanager, Grafana, uptime checkers)", () => {
  const secret = "monitor-secret-7f3a";
  const basic = (credentials: string) => `Basic ${Buffer.from(credentials).toString("base64")}`;

  it("accepts Bearer <secret> and Basic credentials whose password (or user, with no password) is the secret", () => {
    for (const value of [
      `Bearer ${secret}`,
      `bearer  ${secret}`,
      basic(`alertmanager:${secret}`),
      basic(`${secret}:`),
      basic(secret),
    ]) {
      expect(check({ authorization: value }, "{}", secret), value).toEqual({
        ok: true,
        scheme: "authorization",
      });
    }
  });

  it("rejects another token or password, other schemes, and is only consulted when no signature header is present", () => {
    for (const value of [
      "Bearer other",
      `Bearer ${secret}x`,
      basic(`${secret}:other`),
      basic("user:"),
      `Token ${secret}`,
      `Digest ${secret}`,
      secret,
    ]) {
      expect(check({ authorization: value }, "{}", secret).ok, value).toBe(false);
    }
    expect(
      check({ authorization: `Bearer ${secret}`, "x-hub-signature-256": "sha256=00" }, "{}", secret).ok,
    ).toBe(false);
  });

  it("a secret with spaces inside is the whole token after Bearer, as Alertmanager's credentials send it", () => {
    const spaced = "monitor secret with  spaces";
    expect(check({ authorization: `Bearer ${spaced}` }, "{}", spaced)).toEqual({
      ok: true,
      scheme: "authorization",
    });
    for (const value of ["Bearer monitor secret", `Bearer ${spaced} x`, "Bearer", "Bearer  "]) {
      expect(check({ authorization: value }, "{}", spaced).ok, value).toBe(false);
    }
  });
});

describe("Sentry and PagerDuty (monitors that sign the raw body)", () => {
  const secret = "monitor-signing-secret";
  const body = '{"action":"created","data":{"issue":{"id":"1"}}}';

  it("Sentry-Hook-Signature: the hex HMAC-SHA256 of the raw body", () => {
    expect(check({ "sentry-hook-signature": hex(secret, body) }, body, secret)).toEqual({
      ok: true,
      scheme: "sentry",
    });
    expect(check({ "sentry-hook-signature": hex(secret, body) }, `${body} `, secret).ok).toBe(false);
    expect(check({ "sentry-hook-signature": hex("other", body) }, body, secret).ok).toBe(false);
  });

  it("X-PagerDuty-Signature: any v1=<hex> entry of the list may match (secret rotation)", () => {
    const good = hex(secret, body);
    expect(check({ "x-pagerduty-signature": `v1=${good}` }, body, secret)).toEqual({
      ok: true,
      scheme: "pagerduty",
    });
    expect(check({ "x-pagerduty-signature": `v1=${"ab".repeat(32)},v1=${good}` }, body, secret).ok).toBe(
      true,
    );
    expect(check({ "x-pagerduty-signature": `v1=${"ab".repeat(32)}` }, body, secret).ok).toBe(false);
    expect(check({ "x-pagerduty-signature": good }, body, secret).ok).toBe(false);
    expect(check({ "x-pagerduty-signature": `v0=${good}` }, body, secret).ok).toBe(false);
  });
});

describe("Grafana alerting (X-Grafana-Alerting-Signature, its contact point's HMAC signature)", () => {
  const secret = "grafana-hmac-secret";
  const body = '{"receiver":"svc","status":"firing","alerts":[{"status":"firing"}],"groupKey":"{}:{}"}';

  it("without a timestamp header: the hex HMAC-SHA256 of the raw body", () => {
    expect(check({ "x-grafana-alerting-signature": hex(secret, body) }, body, secret)).toEqual({
      ok: true,
      scheme: "grafana",
    });
    expect(check({ "x-grafana-alerting-signature": hex(secret, body) }, `${body} `, secret).ok).toBe(false);
    expect(check({ "x-grafana-alerting-signature": hex("other", body) }, body, secret).ok).toBe(false);
    expect(check({ "x-grafana-alerting-signature": `sha256=${hex(secret, body)}` }, body, secret).ok).toBe(
      false,
    );
  });

  it("with a timestamp header (either name svc reads): HMAC of '<timestamp>:<body>', timestamp within 300 s", () => {
    for (const name of ["x-grafana-alerting-signature-timestamp", "x-grafana-alerting-timestamp"]) {
      const at = (offset: number) => {
        const ts = String(NOW + offset);
        return { "x-grafana-alerting-signature": hex(secret, `${ts}:${body}`), [name]: ts };
      };
      expect(check(at(0), body, secret), name).toEqual({ ok: true, scheme: "grafana" });
      expect(check(at(300), body, secret).ok, name).toBe(true);
      expect(check(at(-300), body, secret).ok, name).toBe(true);
      expect(check(at(301), body, secret).ok, name).toBe(false);
      expect(check(at(-301), body, secret).ok, name).toBe(false);
      // The body alone no longer verifies once a timestamp is sent (it could be replayed with any time).
      expect(check({ ...at(0), "x-grafana-alerting-signature": hex(secret, body) }, body, secret).ok).toBe(
        false,
      );
    }
  });
});

describe("Netlify (a compact JWS in X-Webhook-Signature, its deploy notifications' JWS secret token)", () => {
  const secret = "netlify-jws-secret-token";
  const body = '{"id":"5ebc34bf4fea0b01f02efa3a","site_id":"fa4dd95a","state":"ready","branch":"main"}';
  const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
  const jws = (claims: Record<string, unknown>, key = secret, alg = "HS256") =>
    new SignJWT(claims).setProtectedHeader({ alg, typ: "JWT" }).sign(new TextEncoder().encode(key));

  it("accepts what jose signs as Netlify does: HS256, iss netlify, sha256 of the raw body", async () => {
    const token = await jws({ iss: "netlify", sha256: sha256(body) });
    expect(check({ "x-webhook-signature": token }, body, secret)).toEqual({ ok: true, scheme: "netlify" });
    // Hex digests (the generic V1 scheme of the same header) are still judged as before.
    expect(check({ "x-webhook-signature": hex(secret, body) }, body, secret)).toEqual({
      ok: true,
      scheme: "generic_v1",
    });
  });

  it("rejects another body, key, issuer or algorithm, an expired token and a tampered or malformed JWS", async () => {
    const good = await jws({ iss: "netlify", sha256: sha256(body) });
    const refused = [
      [good, `${body} `],
      [await jws({ iss: "netlify", sha256: sha256(body) }, "other-key-of-32-bytes-at-least!!"), body],
      [await jws({ iss: "someone", sha256: sha256(body) }), body],
      [await jws({ iss: "netlify" }), body],
      [await jws({ iss: "netlify", sha256: sha256(body), exp: NOW - 1 }), body],
      [await jws({ iss: "netlify", sha256: sha256(body), nbf: NOW + 60 }), body],
      [await jws({ iss: "netlify", sha256: sha256(body) }, secret, "HS384"), body],
      [good.replace(/\.[^.]+$/, ".AAAA"), body],
      [`${good}.x`, body],
      ["a.b.c", body],
      [".", body],
    ] as const;
    for (const [value, sent] of refused) {
      expect(check({ "x-webhook-signature": value }, sent, secret).ok, value).toBe(false);
    }
    expect(
      check(
        { "x-webhook-signature": await jws({ iss: "netlify", sha256: sha256(body), exp: NOW + 60 }) },
        body,
        secret,
      ).ok,
    ).toBe(true);
  });
});

describe("Shopify (X-Shopify-Hmac-Sha256)", () => {
  const secret = "shpss_0123456789abcdef0123456789abcdef";
  const body = '{"id":820982911946154500,"email":"jon@example.com"}';
  const b64 = (key: string, data: string) => createHmac("sha256", key).update(data).digest("base64");

  it("accepts the base64 HMAC-SHA256 of the raw body, and nothing else", () => {
    expect(check({ "x-shopify-hmac-sha256": b64(secret, body) }, body, secret)).toEqual({
      ok: true,
      scheme: "shopify",
    });
    expect(check({ "x-shopify-hmac-sha256": b64(secret, body) }, `${body} `, secret).ok).toBe(false);
    expect(check({ "x-shopify-hmac-sha256": b64("other", body) }, body, secret).ok).toBe(false);
    expect(check({ "x-shopify-hmac-sha256": hex(secret, body) }, body, secret).ok).toBe(false);
  });
});

describe("Paddle (Paddle-Signature) and Lemon Squeezy (X-Signature), payment senders", () => {
  const secret = "pdl_ntfset_01gkpjp8bkh3ph6m2mm4n3b1jk_6oB9T6hN0pp3rT0";
  const body = '{"event_id":"evt_01h8","event_type":"transaction.completed","data":{}}';
  const paddle = (ts: number, ...sigs: string[]) => [`ts=${ts}`, ...sigs.map((h) => `h1=${h}`)].join(";");

  it("Paddle: h1 = hex HMAC-SHA256 of '<ts>:<body>'; any h1 may match; ts within 300 s", () => {
    const good = hex(secret, `${NOW}:${body}`);
    expect(check({ "paddle-signature": paddle(NOW, good) }, body, secret)).toEqual({
      ok: true,
      scheme: "paddle",
    });
    expect(check({ "paddle-signature": paddle(NOW, "ab".repeat(32), good) }, body, secret).ok).toBe(true);
    expect(check({ "paddle-signature": paddle(NOW, hex(secret, `${NOW}.${body}`)) }, body, secret).ok).toBe(
      false,
    );
    expect(check({ "paddle-signature": paddle(NOW, good) }, `${body} `, secret).ok).toBe(false);
    const old = NOW - 301;
    expect(check({ "paddle-signature": paddle(old, hex(secret, `${old}:${body}`)) }, body, secret).ok).toBe(
      false,
    );
    expect(check({ "paddle-signature": `h1=${good}` }, body, secret).ok).toBe(false);
  });

  it("Lemon Squeezy: X-Signature = hex HMAC-SHA256 of the raw body", () => {
    expect(check({ "x-signature": hex(secret, body) }, body, secret)).toEqual({
      ok: true,
      scheme: "lemon_squeezy",
    });
    expect(check({ "x-signature": hex(secret, body) }, `${body} `, secret).ok).toBe(false);
    expect(check({ "x-signature": hex("other", body) }, body, secret).ok).toBe(false);
  });

  it("Flux (notification-controller, generic-hmac provider): X-Signature = sha256=<hex HMAC-SHA256 of the raw body>", () => {
    expect(check({ "x-signature": `sha256=${hex(secret, body)}` }, body, secret)).toEqual({
      ok: true,
      scheme: "flux",
    });
    expect(check({ "x-signature": `sha256=${hex(secret, body)}` }, `${body} `, secret).ok).toBe(false);
    expect(check({ "x-signature": `sha256=${hex("other", body)}` }, body, secret).ok).toBe(false);
    expect(check({ "x-signature": `sha1=${hex(secret, body)}` }, body, secret).ok).toBe(false);
  });
});

describe("Gitea, Forgejo and Gogs (their own hex signature headers)", () => {
  const body = '{"ref":"refs/heads/main"}';
  it("X-Gitea-Signature, X-Forgejo-Signature and X-Gogs-Signature: hex HMAC-SHA256 of the raw body, no prefix", () => {
    for (const name of ["x-gitea-signature", "x-forgejo-signature", "x-gogs-signature"]) {
      expect(check({ [name]: hex(SECRET, body) }, body), name).toEqual({ ok: true, scheme: "forge_hmac" });
      expect(check({ [name]: hex(SECRET, body) }, `${body} `).ok, name).toBe(false);
      expect(check({ [name]: `sha256=${hex(SECRET, body)}` }, body).ok, name).toBe(false);
    }
  });

  it("X-Hub-Signature-256, which recent Gitea and Forgejo send too, is examined first", () => {
    const headers = {
      "x-hub-signature-256": `sha256=${hex("other", body)}`,
      "x-gitea-signature": hex(SECRET, body),
    };
    expect(check(headers, body).ok).toBe(false);
  });

  it("a hook without a secret sends every signature header empty: skipped, so its Authorization header decides", () => {
    const unsigned = {
      "x-hub-signature-256": "sha256=",
      "x-hub-signature": "sha1=",
      "x-gitea-signature": "",
      "x-forgejo-signature": "",
      "x-gogs-signature": "",
    };
    expect(check({ ...unsigned, authorization: "Bearer gitea-token" }, body, "gitea-token")).toEqual({
      ok: true,
      scheme: "authorization",
    });
    expect(check({ ...unsigned, authorization: "Bearer other" }, body, "gitea-token").ok).toBe(false);
    expect(check(unsigned, body, "gitea-token")).toEqual({
      ok: false,
      reason: "no recognized signature or token header",
    });
    // Bitbucket's X-Hub-Signature with no digest is skipped the same way; a digest that is present decides.
    const token = "gitea-token";
    expect(check({ "x-hub-signature": "sha256=", "x-gitlab-token": token }, body, token).ok).toBe(true);
    expect(
      check({ "x-hub-signature-256": "sha256=00", authorization: `Bearer ${token}` }, body, token).ok,
    ).toBe(false);
    expect(check({ "x-gitea-signature": "00", authorization: `Bearer ${token}` }, body, token).ok).toBe(
      false,
    );
  });
});

describe("Standard Webhooks asymmetric signatures (v1a, Ed25519; the route secret is the whpk_ public key)", () => {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const whpk = (key: KeyObject) =>
    `whpk_${Buffer.from(key.export({ format: "jwk" }).x ?? "", "base64url").toString("base64")}`;
  const WHPK = whpk(publicKey);
  const body = '{"type":"contact.created","data":{"id":"c1"}}';
  const v1a = (id: string, ts: number, payload: string, key = privateKey) =>
    `v1a,${cryptoSign(null, Buffer.from(`${id}.${ts}.${payload}`), key).toString("base64")}`;
  const sw = (signature: string, prefix = "webhook-", ts = NOW) => ({
    [`${prefix}id`]: "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W",
    [`${prefix}timestamp`]: String(ts),
    [`${prefix}signature`]: signature,
  });
  const signed = (ts = NOW) => v1a("msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", ts, body);

  it("a v1a entry made with the secret key verifies with its whpk_ public key, under either header family", () => {
    expect(check(sw(signed()), body, WHPK)).toEqual({ ok: true, scheme: "standard_webhooks" });
    expect(check(sw(signed(), "svix-"), body, WHPK)).toEqual({ ok: true, scheme: "standard_webhooks" });
    // The specification's example header: a v1 entry beside the v1a one.
    const both = `v1,${createHmac("sha256", "x").update("y").digest("base64")} ${signed()}`;
    expect(check(sw(both), body, WHPK)).toEqual({ ok: true, scheme: "standard_webhooks" });
  });

  it("a tampered body, another key, another id, a stale timestamp or a v1 entry is 401", () => {
    expect(check(sw(signed()), body.replace("c1", "c2"), WHPK).ok).toBe(false);
    const other = generateKeyPairSync("ed25519");
    expect(check(sw(signed()), body, whpk(other.publicKey)).ok).toBe(false);
    expect(check(sw(v1a("msg_other", NOW, body)), body, WHPK).ok).toBe(false);
    expect(check(sw(signed(NOW - 301), "webhook-", NOW - 301), body, WHPK, NOW).ok).toBe(false);
    expect(check(sw(signed(NOW - 300), "webhook-", NOW - 300), body, WHPK, NOW).ok).toBe(true);
    const hmacKeyedWithPublicKey = createHmac("sha256", Buffer.from(WHPK.slice(5), "base64"))
      .update(`msg_2KWPBgLlAfxdpx2AI54pPJ85f4W.${NOW}.${body}`)
      .digest("base64");
    expect(check(sw(`v1,${hmacKeyedWithPublicKey}`), body, WHPK).ok).toBe(false);
  });

  it("the first 8 v1a entries are verified (each costs a verification), a 9th is not", () => {
    const other = generateKeyPairSync("ed25519").privateKey;
    const wrong = v1a("msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", NOW, body, other);
    expect(check(sw([...Array(7).fill(wrong), signed()].join(" ")), body, WHPK).ok).toBe(true);
    expect(check(sw([...Array(8).fill(wrong), signed()].join(" ")), body, WHPK).ok).toBe(false);
  });

  it("a public key is no secret: no scheme keyed with it (HMAC, token, bearer) passes", () => {
    expect(check({ "x-hub-signature-256": `sha256=${hex(WHPK, body)}` }, body, WHPK).ok).toBe(false);
    expect(check({ "x-gitlab-token": WHPK }, body, WHPK).ok).toBe(false);
    expect(check({ authorization: `Bearer ${WHPK}` }, body, WHPK).ok).toBe(false);
    expect(check({ "x-webhook-signature": hex(WHPK, body) }, body, WHPK).ok).toBe(false);
  });

  it("a code-host signature header before the Standard Webhooks headers decides, as on every route: 401", () => {
    const wrongHub = { "x-hub-signature-256": `sha256=${"0".repeat(64)}` };
    expect(check({ ...wrongHub, ...sw(signed()) }, body, WHPK)).toEqual({
      ok: false,
      reason:
        "the route secret is a public key (whpk_), and x-hub-signature-256 decides before webhook-signature",
    });
    expect(check({ "x-gitea-signature": "ab", ...sw(signed(), "svix-") }, body, WHPK)).toEqual({
      ok: false,
      reason: "the route secret is a public key (whpk_), and x-gitea-signature decides before svix-signature",
    });
    // Without a Standard Webhooks header the request is told what such a route verifies.
    expect(check(wrongHub, body, WHPK)).toEqual({
      ok: false,
      reason: "the route secret is a public key (whpk_): only Standard Webhooks v1a signatures verify",
    });
    expect(check({ "x-hub-signature": `sha256=${"0".repeat(64)}`, ...sw(signed()) }, body, WHPK).ok).toBe(
      false,
    );
    // Empty ones, as Gitea sends for a hook without a secret, are skipped; so is GitHub's legacy sha1 header,
    // and a GitLab token, which GitLab sends beside its signature.
    const skipped = {
      "x-hub-signature-256": "sha256=",
      "x-gitea-signature": "",
      "x-hub-signature": "sha1=ab",
    };
    expect(check({ ...skipped, ...sw(signed()) }, body, WHPK).ok).toBe(true);
    expect(check({ "x-gitlab-token": "t", ...sw(signed()) }, body, WHPK).ok).toBe(true);
  });

  it("a v1a entry is ignored by an HMAC secret, and a whpk_ that is no 32-byte key verifies nothing", () => {
    expect(check(sw(signed()), body, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").ok).toBe(false);
    expect(check(sw(signed()), body, `whpk_${Buffer.alloc(31, 1).toString("base64")}`)).toEqual({
      ok: false,
      reason: "the route secret starts with whpk_ but is not a base64 Ed25519 public key",
    });
    expect(check(sw(signed()), body, "whpk_not*base64").ok).toBe(false);
  });
});
