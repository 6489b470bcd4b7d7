import { createHmac, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * Self-hosted code hosts (spec 1) as they send. Gogs, and Gitea before it added GitHub's names: only
 * their own headers, `X-Gogs-Signature` / `X-Gitea-Signature` (hex HMAC-SHA256 of the body, no prefix),
 * `X-Gogs-Event` / `X-Gitea-Event` and `X-Gogs-Delivery` / `X-Gitea-Delivery`.
 */

const SECRET = "forge-secret-Qm7v";
const hex = (key: string, text: string) => createHmac("sha256", key).update(text).digest("hex");

describe.each(["uws", "node"] as const)("Gogs and Gitea hooks on the %s server", (http) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      http,
      config: webhookConfig({ forge: { secret: SECRET, events: ["push"] } }, { rate_limit: 1000 }),
    });
  });
  afterAll(() => gw.stop());

  const push = JSON.stringify({
    ref: "refs/heads/master",
    before: "28e1879d029cb852e4844d9c718537df08844e03",
    after: "bffeb74224043ba2feb48d137756c8a9331c449a",
    commits: [{ id: "bffeb74224043ba2feb48d137756c8a9331c449a", message: "Update README\n" }],
    repository: { id: 1, full_name: "unknwon/webhooks" },
    pusher: { username: "unknwon" },
  });

  for (const host of ["Gogs", "Gitea"] as const) {
    it(`${host}: X-${host}-Signature is checked, X-${host}-Event is the event, X-${host}-Delivery the delivery id`, async () => {
      const delivery = randomUUID();
      const headers = (event: string, key = SECRET) => ({
        [`X-${host}-Signature`]: hex(key, push),
        [`X-${host}-Event`]: event,
        [`X-${host}-Delivery`]: delivery,
      });
      const post = (h: Record<string, string>) => postJson(gw.url("/webhooks/forge"), push, h);
      expect(await post(headers("push"))).toMatchObject({
        status: 202,
        body: { status: "accepted", route: "forge", event: "push", delivery_id: delivery },
      });
      expect(await post(headers("push"))).toMatchObject({ status: 200, body: { status: "duplicate" } });
      expect(await post(headers("create"))).toMatchObject({
        status: 200,
        body: { status: "ignored", event: "create" },
      });
      expect(await post(headers("push", "wrong"))).toMatchObject({ status: 401 });
    });
  }

  it("Gitea/Forgejo hook with no secret, authenticated by its Authorization header option: the empty signature headers are skipped", async () => {
    // As Gitea and Forgejo send a hook without a secret: every signature header, with no digest.
    const headers = (authorization: string) => ({
      "X-Gitea-Event": "push",
      "X-Gitea-Delivery": randomUUID(),
      "X-Gitea-Signature": "",
      "X-Forgejo-Signature": "",
      "X-Gogs-Signature": "",
      "X-Hub-Signature": "sha1=",
      "X-Hub-Signature-256": "sha256=",
      Authorization: authorization,
    });
    const post = (h: Record<string, string>) => postJson(gw.url("/webhooks/forge"), push, h);
    expect(await post(headers(`Bearer ${SECRET}`))).toMatchObject({
      status: 202,
      body: { status: "accepted", event: "push" },
    });
    expect(await post(headers("Bearer wrong"))).toMatchObject({
      status: 401,
      body: { error: "Invalid signature" },
    });
  });
});
