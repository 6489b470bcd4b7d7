import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { sign as signGithub } from "@octokit/webhooks-methods";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type RequestRecord, readHistory } from "../../../src/io/stores/deliveryHistory.js";
import { HTTP_SERVERS, startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

const SECRET = "compressed-quota-secret-8812";
let gw: TestGateway;
afterEach(() => gw.stop());

describe.each(HTTP_SERVERS)("a compressed body on the %s server", (http) => {
  it("is decoded only once the route's rate limit let it through: past the quota a gzip bomb is 429, never inflated; an accepted one is kept decoded in the history", async () => {
    gw = await startTestGateway({
      http,
      config: webhookConfig({ z: { secret: SECRET } }, { rate_limit: 1 }),
    });
    const url = gw.url("/webhooks/z");
    const body = '{"action":"opened"}';
    const accepted = await postJson(url, gzipSync(body), {
      "Content-Encoding": "gzip",
      "X-Hub-Signature-256": await signGithub(SECRET, body),
      "X-GitHub-Delivery": "gz-1",
    });
    expect(accepted).toMatchObject({ status: 202, body: { status: "accepted", delivery_id: "gz-1" } });
    // ~1 KB on the wire, 1 MiB + 1 once inflated: decoded first, it was 413 (and cost a MiB of
    // inflating per request to anyone, signed or not, however spent the quota).
    const bomb = gzipSync(Buffer.alloc(1_048_577, " "));
    expect(await postJson(url, bomb, { "Content-Encoding": "gzip" })).toMatchObject({
      status: 429,
      body: { error: "Rate limit exceeded" },
    });
    // The history keeps the event as the route read it: the decoded JSON, not the gzip bytes.
    await vi.waitFor(
      () => {
        const record = readHistory(join(gw.home.dir, "deliveries")).find(
          (r): r is RequestRecord => r.kind === "request" && r.id === "gz-1",
        );
        expect(record).toMatchObject({ payload: body, payload_encoding: "json" });
      },
      { timeout: 10_000 },
    );
  });
});
