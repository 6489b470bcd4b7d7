import { describe, expect, it } from "vitest";
import { payloadNotKept } from "../../../src/cli/webhook/notKept.js";

describe("svc webhook redeliver: why a payload was not kept", () => {
  it("names a 413, whose record carries no mark (its body was never read), by its answer", () => {
    expect(payloadNotKept({ status: 413, outcome: "Payload too large" })).toBe(
      "answered 413 Payload too large before its body was read: it was over platforms.webhook.max_body_bytes",
    );
  });

  it("names the answer of any other request the route did not accept, read or not", () => {
    expect(
      payloadNotKept({ status: 401, outcome: "Invalid signature", payload_omitted: "not_accepted" }),
    ).toBe("the route did not accept the request: 401 Invalid signature");
    // With why, where the record kept it (a 401's reason); a control character in it is shown escaped.
    expect(
      payloadNotKept({
        status: 401,
        outcome: "Invalid signature",
        payload_omitted: "not_accepted",
        reason: "x-hub-signature-256 does not match",
      }),
    ).toBe(
      "the route did not accept the request: 401 Invalid signature — x-hub-signature-256 does not match",
    );
    expect(
      payloadNotKept({ status: 401, outcome: "Invalid signature", reason: "x-evil\u001b[2J does not match" }),
    ).toBe("the route did not accept the request: 401 Invalid signature — x-evil\\u001b[2J does not match");
    expect(payloadNotKept({ status: 404, outcome: "Unknown route" })).toBe(
      "the route did not accept the request: 404 Unknown route",
    );
  });

  it("says a kept-size limit for a payload over 256 KiB", () => {
    expect(payloadNotKept({ status: 202, outcome: "accepted", payload_omitted: "too_large" })).toBe(
      "larger than 256 KiB",
    );
  });
});
