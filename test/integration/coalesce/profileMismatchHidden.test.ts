import { sign } from "@octokit/webhooks-methods";
import { describe, expect, it } from "vitest";
import { gatewayPerTest, webhookConfig } from "../../helpers/gateway.js";
import { postJson, rawHttp } from "../../helpers/http.js";

/**
 * Spec 4.1 / 5 rule 3: a profile mismatch is rejected without revealing that the route exists. Probes on
 * the wrong prefix must not be told apart from an unknown route by any answer, nor spend the route's budget.
 */

const perTest = gatewayPerTest();
const live = perTest.live;
const SECRET = "bound-secret";
const signed = async (path: string, id: string) => {
  const text = JSON.stringify({ id });
  return postJson(live().url(path), text, {
    "X-Hub-Signature-256": await sign(SECRET, text),
    "x-request-id": id,
  });
};

describe.each(["uws", "node"] as const)("profile mismatch looks like an unknown route (%s)", (http) => {
  it("same status, body and headers as an unknown route; wrong-prefix probes do not use the route's rate limit", async () => {
    await perTest.start({
      http,
      config: webhookConfig(
        { bound: { secret: SECRET, profile: "work", prompt: "x" } },
        { rate_limit: 2 },
        { gateway: { multiplex_profiles: true } },
      ),
    });
    const strip = (h: Headers) => {
      const copy = Object.fromEntries(h.entries());
      delete copy.date;
      return copy;
    };
    const mismatch = await signed("/p/home/webhooks/bound", "m1");
    const unknown = await signed("/p/home/webhooks/nothing_here", "u1");
    expect(mismatch.status).toBe(404);
    expect(mismatch.body).toEqual(unknown.body);
    expect(strip(mismatch.headers)).toEqual(strip(unknown.headers));
    // A large declared body: both are refused before it is read, the same way.
    const big = (path: string) =>
      rawHttp(live().gateway.port, [
        `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 50000000\r\n\r\n{`,
      ]);
    const [bigMismatch, bigUnknown] = [
      await big("/p/home/webhooks/bound"),
      await big("/p/home/webhooks/nothing_here"),
    ];
    expect(bigMismatch.status).toBe(404);
    expect(bigMismatch.body).toBe(bigUnknown.body);

    for (let i = 0; i < 5; i++) expect((await signed("/webhooks/bound", `p${i}`)).status).toBe(404);
    expect((await signed("/p/work/webhooks/bound", "ok1")).status).toBe(202);
    expect((await signed("/p/work/webhooks/bound", "ok2")).status).toBe(202);
    expect((await signed("/p/work/webhooks/bound", "ok3")).status).toBe(429);
    // Once the route's budget is spent, the wrong prefix still answers 404, not 429.
    expect((await signed("/p/home/webhooks/bound", "m2")).status).toBe(404);
  });
});
