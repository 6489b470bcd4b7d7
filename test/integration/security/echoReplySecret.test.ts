import { createHmac } from "node:crypto";
import { afterEach, expect, it, vi } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

const ROUTE_SECRET = "gogs-route-secret-7Q1x9W2z";
const DEPLOY_TOKEN = "dtok-5531abcdef0123456789";
const hex = (text: string) => createHmac("sha256", ROUTE_SECRET).update(text).digest("hex");

let gw: TestGateway;
afterEach(() => gw.stop());

// Gogs, and Gitea before 1.14, send the hook's secret inside the payload; the default agent (echo) replies with
// the default prompt, the whole payload, and the log target wrote that reply to gateway.log as it was.
it("the echo agent's reply of a payload holding the route's secret and a loaded credential has both [redacted]", async () => {
  gw = await startTestGateway({
    files: { ".env": `DEPLOY_TOKEN=${DEPLOY_TOKEN}\n` },
    config: webhookConfig({ gogs: { secret: ROUTE_SECRET } }),
  });
  const body = JSON.stringify({
    secret: ROUTE_SECRET,
    ref: "refs/heads/main",
    note: `token ${DEPLOY_TOKEN}`,
  });
  const answer = await postJson(gw.url("/webhooks/gogs"), body, {
    "X-Gogs-Event": "push",
    "X-Gogs-Delivery": "g-echo",
    "X-Gogs-Signature": hex(body),
  });
  expect(answer.status).toBe(202);
  const reply = await vi.waitFor(
    () => {
      const line = gw.logs().find((l) => l.delivery_id === "g-echo" && l.msg.includes(" reply:"));
      if (line === undefined) throw new Error("not delivered yet");
      return line.msg;
    },
    { timeout: 15_000, interval: 50 },
  );
  expect(reply).toContain('"secret": "[redacted]"');
  expect(reply).toContain('"ref": "refs/heads/main"');
  expect(reply).toContain('"note": "token [redacted]"');
  const log = JSON.stringify(gw.logs());
  expect(log).not.toContain(ROUTE_SECRET);
  expect(log).not.toContain(DEPLOY_TOKEN);
});
