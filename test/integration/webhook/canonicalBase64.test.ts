import { createHmac, generateKeyPairSync, sign } from "node:crypto";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { Webhook as SvixWebhook } from "svix";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * Base64 signatures are text the sender's library wrote, and its verifier compares that text. The last
 * character before `=` padding carries bits past the final byte (2 of them for a 32-byte HMAC, 4 for a
 * 64-byte Ed25519 signature); a decoder drops them, so several spellings decode to the same bytes. Only the
 * one the sender writes (those bits zero, RFC 4648 §3.5) is its signature: standardwebhooks and svix refuse
 * the others, and so must the gateway.
 */

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/** `encoded` with a padding bit of its last data character set: the same bytes, spelled otherwise. */
function sameBytesOtherSpelling(encoded: string): string {
  const at = encoded.length - (encoded.endsWith("==") ? 3 : 2);
  const value = ALPHABET.indexOf(encoded[at] as string);
  const other = `${encoded.slice(0, at)}${ALPHABET[value ^ 1]}${encoded.slice(at + 1)}`;
  expect(Buffer.from(other, "base64")).toEqual(Buffer.from(encoded, "base64"));
  expect(other).not.toBe(encoded);
  return other;
}

const WHSEC = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const SHOPIFY_SECRET = "shopify-client-secret";
const keys = generateKeyPairSync("ed25519");
const WHPK = `whpk_${keys.publicKey.export({ format: "der", type: "spki" }).subarray(12).toString("base64")}`;

describe("base64 signatures are accepted only as their senders spell them", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      config: webhookConfig(
        { sw: { secret: WHSEC }, shop: { secret: SHOPIFY_SECRET }, pk: { secret: WHPK } },
        { rate_limit: 1000 },
      ),
    });
  });
  afterAll(() => gw.stop());
  const nowSeconds = () => Math.floor(gw.clock.now() / 1000);
  const post = (route: string, body: string, headers: Record<string, string>) =>
    postJson(gw.url(`/webhooks/${route}`), body, headers);

  for (const [prefix, Library] of [
    ["webhook-", StandardWebhook],
    ["svix-", SvixWebhook],
  ] as const) {
    it(`${prefix}signature: a v1 entry that decodes to the valid HMAC but is not its base64 as the library writes it is 401 (the library refuses it too)`, async () => {
      const body = '{"type":"invoice.paid"}';
      const library = new Library(WHSEC);
      const id = `msg_${prefix}spelling`;
      const signed = library.sign(id, new Date(nowSeconds() * 1000), body);
      const respelled = `v1,${sameBytesOtherSpelling(signed.slice("v1,".length))}`;
      const headers = (signature: string) => ({
        [`${prefix}id`]: id,
        [`${prefix}timestamp`]: String(nowSeconds()),
        [`${prefix}signature`]: signature,
      });
      expect(() => library.verify(body, headers(respelled))).toThrow();
      expect(await post("sw", body, headers(respelled))).toMatchObject({
        status: 401,
        body: { error: "Invalid signature" },
      });
      // The untouched signature passes (and was not spent by the refused request).
      expect(await post("sw", body, headers(signed))).toMatchObject({
        status: 202,
        body: { delivery_id: id },
      });
    });
  }

  it("X-Shopify-Hmac-Sha256: the HMAC's base64 spelled with a padding bit set is 401", async () => {
    const body = '{"id":1}';
    const digest = createHmac("sha256", SHOPIFY_SECRET).update(body).digest("base64");
    expect(
      await post("shop", body, { "X-Shopify-Hmac-Sha256": sameBytesOtherSpelling(digest) }),
    ).toMatchObject({ status: 401, body: { error: "Invalid signature" } });
    expect(await post("shop", body, { "X-Shopify-Hmac-Sha256": digest })).toMatchObject({ status: 202 });
  });

  it("v1a (Ed25519, whpk_ route): the signature's base64 spelled with padding bits set is 401", async () => {
    const body = '{"type":"user.created"}';
    const id = "msg_v1a_spelling";
    const ts = String(nowSeconds());
    const signature = sign(null, Buffer.from(`${id}.${ts}.${body}`), keys.privateKey).toString("base64");
    const headers = (entry: string) => ({
      "webhook-id": id,
      "webhook-timestamp": ts,
      "webhook-signature": `v1a,${entry}`,
    });
    expect(await post("pk", body, headers(sameBytesOtherSpelling(signature)))).toMatchObject({
      status: 401,
      body: { error: "Invalid signature" },
    });
    expect(await post("pk", body, headers(signature))).toMatchObject({
      status: 202,
      body: { delivery_id: id },
    });
  });
});
