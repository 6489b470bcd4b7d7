import { createHmac } from "node:crypto";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { signTestEvent } from "../../../src/cli/webhook/signTest.js";

/** How `svc webhook test` and `redeliver` sign: the way the gateway will verify the route's secret. */
describe("signTestEvent", () => {
  const body = '{"n":1}';
  const now = 1_790_000_000;

  it("a whsec_ key, padded or not, is signed as Standard Webhooks senders sign, over the given id", () => {
    const unpadded = `whsec_${Buffer.alloc(32, 9).toString("base64").replace(/=+$/, "")}`;
    // The library checks the timestamp against its own clock.
    const headers = signTestEvent(unpadded, body, Math.floor(Date.now() / 1000), "msg_1");
    expect(headers["webhook-id"]).toBe("msg_1");
    const verified = new StandardWebhook(unpadded).verify(body, headers);
    expect(verified).toEqual({ n: 1 });
  });

  it("a whsec_ secret that encodes no key is signed with the generic V2 scheme, keyed with the whole secret", () => {
    const secret = "whsec_not*base64!";
    const headers = signTestEvent(secret, body, now);
    expect(headers).toEqual({
      "x-webhook-timestamp": String(now),
      "x-webhook-signature-v2": createHmac("sha256", secret).update(`${now}.${body}`).digest("hex"),
    });
  });
});

describe("signTestEvent for a whpk_ route", () => {
  it("refuses: svc holds only the public key, so only the sender can sign", () => {
    expect(() =>
      signTestEvent(`whpk_${Buffer.alloc(32, 1).toString("base64")}`, "{}", 1_790_000_000),
    ).toThrow(/public key \(whpk_\): only the sender, which holds the secret key, can sign/);
  });
});
