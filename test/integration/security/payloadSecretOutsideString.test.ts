import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it, vi } from "vitest";
import { historyOfIds, type RequestRecord } from "../../../src/io/stores/deliveryHistory.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

// A short all-digit secret, as one set up for a quick test: it also occurs in the payload's numbers.
const SECRET = "4242";
const hex = (text: string) => createHmac("sha256", SECRET).update(text).digest("hex");

let gw: TestGateway;
afterEach(() => gw.stop());

/**
 * The route's secret is redacted from a kept payload wherever it occurs. Where it occurred outside a JSON
 * string (in a number), the redacted body was still written unescaped as the line's JSON value, which it
 * no longer was: the line could not be read, and the accepted request was gone from the history.
 */
it("an accepted request whose payload held the secret outside a JSON string is still recorded, its secret redacted", async () => {
  gw = await startTestGateway({ config: webhookConfig({ gogs: { secret: SECRET, prompt: "push" } }) });
  const body = `{"secret":"${SECRET}","pusher":{"id":142420},"ref":"refs/heads/main"}`;
  const answer = await postJson(gw.url("/webhooks/gogs"), body, {
    "X-Gogs-Event": "push",
    "X-Gogs-Delivery": "g-number",
    "X-Gogs-Signature": hex(body),
  });
  expect(answer.status).toBe(202);
  const dir = join(gw.home.dir, "deliveries");
  await vi.waitFor(() => expect(readFileSync(join(dir, "history.jsonl"), "utf8")).toContain("g-number"));
  expect(readFileSync(join(dir, "history.jsonl"), "utf8")).not.toContain(SECRET);
  const [record] = historyOfIds(dir, (id) => id === "g-number") as RequestRecord[];
  expect(record).toMatchObject({ kind: "request", status: 202, outcome: "accepted" });
  expect(record?.payload).toBe(body.replaceAll(SECRET, "[redacted]"));
});
