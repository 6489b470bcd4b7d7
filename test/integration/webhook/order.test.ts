import { sign as signGithub } from "@octokit/webhooks-methods";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  RECORDER_AGENT,
  recorderAgent,
  startTestGateway,
  type TestGateway,
  waitForRun,
  webhookConfig,
} from "../../helpers/gateway.js";
import { postJson, rawHttp } from "../../helpers/http.js";

/**
 * Spec 4.2's order, seen from outside: each test sends a request that breaks two rules at once and
 * checks that the earlier step answers. Bodies are compared whole (spec 2.7 and 7).
 */

const SECRET = "order-secret";
const BAD = { "X-Hub-Signature-256": `sha256=${"0".repeat(64)}` };
const signed = async (body: string, extra: Record<string, string> = {}) => ({
  "X-Hub-Signature-256": await signGithub(SECRET, body),
  ...extra,
});

describe("processing order (spec 4.2) with every outcome's exact body", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      config: webhookConfig(
        {
          gh: { secret: SECRET, events: ["push"], filters: [{ field: "ref", equals: "refs/heads/main" }] },
          co: { secret: SECRET, coalesce: { key: "pr" } },
        },
        { rate_limit: 1000, max_body_bytes: 64 },
      ),
    });
  });
  afterAll(() => gw.stop());
  const post = (route: string, body: string, headers: Record<string, string>) =>
    postJson(gw.url(`/webhooks/${route}`), body, headers);
  const exact = (res: { status: number; body: unknown }) => ({ status: res.status, body: res.body });

  it("an unknown route with a bad signature is 404 Unknown route, not 401", async () => {
    expect(exact(await post("nope", "{}", BAD))).toEqual({ status: 404, body: { error: "Unknown route" } });
  });

  it("an oversized body with a bad signature is 413, declared or chunked", async () => {
    const big = `{"ref":"${"x".repeat(100)}"}`;
    expect(exact(await post("gh", big, BAD))).toEqual({ status: 413, body: { error: "Payload too large" } });
    const chunked = await rawHttp(gw.gateway.port, [
      "POST /webhooks/gh HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n" +
        `X-Hub-Signature-256: ${BAD["X-Hub-Signature-256"]}\r\n\r\n`,
      `${big.length.toString(16)}\r\n${big}\r\n0\r\n\r\n`,
    ]);
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.body)).toEqual({ error: "Payload too large" });
  });

  it("a bad signature on malformed JSON is 401; malformed JSON for an unlisted event is 400", async () => {
    expect(exact(await post("gh", "{oops", { ...BAD, "X-GitHub-Event": "issues" }))).toEqual({
      status: 401,
      body: { error: "Invalid signature" },
    });
    expect(exact(await post("gh", "{oops", await signed("{oops", { "X-GitHub-Event": "issues" })))).toEqual({
      status: 400,
      body: { error: "Invalid JSON body" },
    });
  });

  it("the event check comes before filters: an unlisted event failing the filter is ignored by event", async () => {
    const body = '{"ref":"refs/heads/dev"}';
    expect(exact(await post("gh", body, await signed(body, { "X-GitHub-Event": "issues" })))).toEqual({
      status: 200,
      body: { status: "ignored", event: "issues" },
    });
    expect(exact(await post("gh", body, await signed(body, { "X-GitHub-Event": "push" })))).toEqual({
      status: 200,
      body: { status: "ignored", reason: "filter" },
    });
  });

  it("idempotency comes after event and filter checks: a known delivery id failing them is ignored, not duplicate", async () => {
    const body = '{"ref":"refs/heads/main"}';
    const headers = await signed(body, { "X-GitHub-Event": "push", "X-GitHub-Delivery": "order-1" });
    expect(exact(await post("gh", body, headers))).toEqual({
      status: 202,
      body: { status: "accepted", route: "gh", event: "push", delivery_id: "order-1" },
    });
    expect(exact(await post("gh", body, headers))).toEqual({ status: 200, body: { status: "duplicate" } });
    const dev = '{"ref":"refs/heads/dev"}';
    expect(
      exact(
        await post(
          "gh",
          dev,
          await signed(dev, { "X-GitHub-Event": "push", "X-GitHub-Delivery": "order-1" }),
        ),
      ),
    ).toEqual({ status: 200, body: { status: "ignored", reason: "filter" } });
    expect(
      exact(
        await post(
          "gh",
          body,
          await signed(body, { "X-GitHub-Event": "ping", "X-GitHub-Delivery": "order-1" }),
        ),
      ),
    ).toEqual({ status: 200, body: { status: "ignored", event: "ping" } });
  });

  it("coalescing comes after idempotency: 202 {status: coalesced}, and a repeated delivery id is duplicate", async () => {
    const body = '{"pr":7}';
    const headers = await signed(body, { "X-GitHub-Delivery": "co-1" });
    expect(exact(await post("co", body, headers))).toEqual({ status: 202, body: { status: "coalesced" } });
    expect(exact(await post("co", body, headers))).toEqual({ status: 200, body: { status: "duplicate" } });
    const other = await signed(body, { "X-GitHub-Delivery": "co-2" });
    expect(exact(await post("co", body, other))).toEqual({ status: 202, body: { status: "coalesced" } });
  });
});

describe("rate limit position and Retry-After (spec 4.2 step 3, fake clock)", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      config: webhookConfig(
        { gh: { secret: SECRET }, other: { secret: SECRET } },
        { rate_limit: 2, max_body_bytes: 64 },
      ),
    });
  });
  afterAll(() => gw.stop());
  const post = (route: string, body: string, headers: Record<string, string>) =>
    postJson(gw.url(`/webhooks/${route}`), body, headers);

  it("unknown routes and oversized bodies (steps 1-2) do not use the budget; bad signatures (step 4) do", async () => {
    for (let i = 0; i < 3; i++) {
      expect((await post("missing", "{}", BAD)).status).toBe(404);
      expect((await post("gh", `{"a":"${"x".repeat(100)}"}`, BAD)).status).toBe(413);
    }
    expect((await post("gh", "{}", BAD)).status).toBe(401);
    expect((await post("gh", "{}", await signed("{}"))).status).toBe(202);
    // Budget spent: even a valid signature is 429, and a bad one is 429 rather than 401.
    expect(await post("gh", "{}", await signed("{}"))).toMatchObject({
      status: 429,
      body: { error: "Rate limit exceeded" },
    });
    expect((await post("gh", "{}", BAD)).status).toBe(429);
    expect((await post("other", "{}", await signed("{}"))).status).toBe(202);
  });

  it("a 429 says in Retry-After how many seconds remain in the route's window", async () => {
    const first = await post("gh", "{}", await signed("{}"));
    expect(first.status).toBe(429);
    const full = Number(first.headers.get("retry-after"));
    expect(full).toBeGreaterThanOrEqual(59);
    expect(full).toBeLessThanOrEqual(60);
    gw.clock.advance(30_000);
    const later = await post("gh", "{}", await signed("{}"));
    expect(later.status).toBe(429);
    expect(Number(later.headers.get("retry-after"))).toBe(full - 30);
    gw.clock.advance(full * 1000 - 30_000);
    expect((await post("gh", "{}", await signed("{}"))).status).toBe(202);
  });
});

describe("concurrent retries of one delivery (spec 6)", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      files: {
        "agent/recorder.sh": RECORDER_AGENT,
        "scripts/pass.sh": "cat\n",
      },
      config: webhookConfig(
        { plain: { secret: SECRET }, scripted: { secret: SECRET, script: "pass.sh" } },
        { rate_limit: 1000 },
        { agent: recorderAgent() },
      ),
    });
  });
  afterAll(() => gw.stop());

  it.each(["plain", "scripted"])(
    "20 copies sent at once to the %s route: one accepted, 19 duplicate, one run",
    async (route) => {
      const body = '{"n":1}';
      const id = `burst-${route}`;
      const headers = await signed(body, { "X-GitHub-Delivery": id });
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => postJson(gw.url(`/webhooks/${route}`), body, headers)),
      );
      const accepted = answers.filter((a) => a.status === 202);
      expect(accepted.map((a) => a.body)).toEqual([
        { status: "accepted", route, event: "unknown", delivery_id: id },
      ]);
      expect(answers.filter((a) => a.status === 200 && a.body.status === "duplicate")).toHaveLength(19);
      await waitForRun(gw, id);
      const replies = () =>
        gw.logs().filter((l) => l.msg.startsWith(`[webhook] ${route} reply:`) && l.delivery_id === id);
      await vi.waitFor(() => expect(replies().length).toBeGreaterThan(0), { timeout: 10_000 });
      expect(replies()).toHaveLength(1);
    },
  );
});
