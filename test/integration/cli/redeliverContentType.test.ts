import { createHmac } from "node:crypto";
import { afterEach, expect, it, vi } from "vitest";
import { historyOfIds, type RequestRecord } from "../../../src/io/stores/deliveryHistory.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { rawHttp } from "../../helpers/http.js";
import { svc } from "./svc.js";

const SECRET = "content-type-secret";
let gw: TestGateway;
afterEach(() => gw.stop());

/**
 * `svc webhook redeliver` sends the recorded content type as it was received, non-ASCII text as its UTF-8
 * bytes (docs/cli.md). One with a character outside Latin-1 was handed to node:http as it is, which
 * refused it: the command said it could not reach the gateway and to start it, while it ran.
 */
it("redelivers a content type with non-ASCII text in it as it was received", {
  timeout: 60_000,
}, async () => {
  gw = await startTestGateway({ config: webhookConfig({ pr: { secret: SECRET, prompt: "PR {a}" } }) });
  const body = '{"a":1}';
  const signature = createHmac("sha256", SECRET).update(body).digest("hex");
  const contentType = "application/json; profile=\u2192v2";
  const head = [
    "POST /webhooks/pr HTTP/1.1",
    "Host: localhost",
    "X-GitHub-Event: push",
    "X-GitHub-Delivery: ct-1",
    `X-Hub-Signature-256: sha256=${signature}`,
    `Content-Type: ${contentType}`,
    `Content-Length: ${body.length}`,
    "Connection: close",
  ].join("\r\n");
  const sent = await rawHttp(gw.gateway.port, [Buffer.from(`${head}\r\n\r\n${body}`, "utf8")]);
  expect(sent.status).toBe(202);
  const dir = `${gw.home.dir}/deliveries`;
  // The request's record is what redeliver sends again: waited for (a run's record may come first).
  await vi.waitFor(() =>
    expect(historyOfIds(dir, (id) => id === "ct-1").map((r) => r.kind)).toContain("request"),
  );

  const again = await svc(gw.home, ["webhook", "redeliver", "ct-1", "--port", String(gw.gateway.port)]);
  expect(again).toMatchObject({ code: 0, stdout: expect.stringContaining("202 Accepted") });
  const newId = /as (redelivery-[0-9a-f]{8}-ct-1)\)/.exec(again.stdout)?.[1] as string;
  const redelivered = await vi.waitFor(() => {
    const [record] = historyOfIds(dir, (id) => id === newId) as RequestRecord[];
    expect(record).toBeDefined();
    return record as RequestRecord;
  });
  expect(redelivered).toMatchObject({ content_type: contentType, payload: body, redelivery_of: "ct-1" });
});
