import { createHmac, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * A code host's hook saved without a secret still delivers, unsigned: GitHub with no signature header,
 * Gitea and Forgejo with theirs empty, GitLab with no X-Gitlab-Token, and a sender that copies GitHub's
 * legacy scheme with `X-Hub-Signature: sha1=` alone. Each is refused 401; the reason the gateway keeps
 * (DEBUG log, `svc webhook deliveries`) says what to set at the sender, not only that no header was found.
 */

const SECRET = "unsigned-senders-secret";
const BODY = JSON.stringify({ ref: "refs/heads/main", after: "0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c" });

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ config: webhookConfig({ hooks: { secret: SECRET } }, { rate_limit: 1000 }) });
});
afterAll(() => gw.stop());

const PREFIX = "[webhook] hooks: rejected (401): ";
const rejections = () => gw.logs().filter((l) => l.msg.startsWith(PREFIX));

/** The reason of the DEBUG line `[webhook] hooks: rejected (401): <reason>` this request added. */
async function refusal(headers: Record<string, string>): Promise<string> {
  const before = rejections().length;
  const answer = await postJson(gw.url("/webhooks/hooks"), BODY, {
    "Content-Type": "application/json",
    ...headers,
  });
  expect(answer).toMatchObject({ status: 401, body: { error: "Invalid signature" } });
  return vi.waitFor(() => {
    const line = rejections()[before];
    expect(line).toBeDefined();
    return (line as { msg: string }).msg.slice(PREFIX.length);
  });
}

describe("a code host's hook without a secret: 401 with a reason that says to set it", () => {
  it("GitHub (no X-Hub-Signature-256, no X-Hub-Signature)", async () => {
    const id = randomUUID();
    const reason = await refusal({
      "User-Agent": "GitHub-Hookshot/044aadd",
      "X-GitHub-Event": "push",
      "X-GitHub-Delivery": id,
      "X-GitHub-Hook-ID": "292430182",
    });
    expect(reason).toBe(
      "no signature: the code host's hook has no secret (its signature headers are absent or empty) — set the hook's Secret to the route secret",
    );
  });

  it("Gitea (its signature headers sent empty)", async () => {
    const id = randomUUID();
    const reason = await refusal({
      "X-Gitea-Event": "push",
      "X-Gitea-Delivery": id,
      "X-GitHub-Event": "push",
      "X-GitHub-Delivery": id,
      "X-Gitea-Signature": "",
      "X-Gogs-Signature": "",
      "X-Hub-Signature": "",
      "X-Hub-Signature-256": "",
    });
    expect(reason).toContain("the code host's hook has no secret");
  });

  it("GitLab (no X-Gitlab-Token)", async () => {
    const id = randomUUID();
    const reason = await refusal({
      "User-Agent": "GitLab/17.5.0",
      "X-Gitlab-Event": "Push Hook",
      "Idempotency-Key": id,
    });
    expect(reason).toBe(
      "no x-gitlab-token: the GitLab hook has no secret token — set its Secret token to the route secret",
    );
  });

  it("a sender signing only with GitHub's legacy sha1 (X-Hub-Signature: sha1=) is told to sign with SHA-256", async () => {
    const id = randomUUID();
    const reason = await refusal({
      "X-GitHub-Event": "push",
      "X-GitHub-Delivery": id,
      "X-Hub-Signature": `sha1=${createHmac("sha1", SECRET).update(BODY).digest("hex")}`,
    });
    expect(reason).toBe(
      "only x-hub-signature: sha1=<hex> (GitHub's legacy SHA-1 signature), which is not checked — the sender must sign with HMAC-SHA256 in X-Hub-Signature-256 (sha256=<hex>)",
    );
  });

  it("a request that names no sender keeps the plain reason", async () => {
    const id = randomUUID();
    expect(await refusal({ "X-Request-ID": id })).toBe("no recognized signature or token header");
  });
});
