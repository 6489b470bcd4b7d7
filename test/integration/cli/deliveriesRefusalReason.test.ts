import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { signGenericV2 } from "../../../src/cli/webhook.js";
import { TIMESTAMP_TOLERANCE_SECONDS } from "../../../src/streams/signatures.js";
import {
  HTTP_SERVERS,
  RECORDER_AGENT,
  recorderAgent,
  startTestGateway,
  type TestGateway,
  webhookConfig,
} from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { svc } from "./svc.js";

const SECRET = "refusal-reason-secret";
const UNSIGNED_HOOK =
  "no signature: the code host's hook has no secret (its signature headers are absent or empty) — set the hook's Secret to the route secret";
const hex = (key: string, text: string) => createHmac("sha256", key).update(text).digest("hex");

let gw: TestGateway;
afterEach(() => gw.stop());

/** A route script that ignores every event: exit 1, with output that must stay out of the history. */
const REFUSING_SCRIPT =
  'cat >/dev/null\necho "stdout-of-the-script"\necho "stderr-of-the-script" >&2\nexit 1\n';

describe.each(HTTP_SERVERS)("svc webhook deliveries: why a 401, why a 200 ignored, on %s", (http) => {
  it("the history keeps the auth stage's reason, and what ignored an event (events, a filter, the script), shown in the NOTE and as `reason` in --json; no secret, signature or script output is written", {
    timeout: 120_000,
  }, async () => {
    gw = await startTestGateway({
      http,
      config: webhookConfig(
        {
          // A signed push passes the signature and is then ignored (the route takes issues): no run.
          gh: { secret: SECRET, events: ["issues"], prompt: "issue" },
          open: { secret: "INSECURE_NO_AUTH", events: ["issues"], prompt: "issue" },
          // The second filter decides an `opened` issue: the history names it by its field.
          filtered: {
            secret: SECRET,
            filters: [
              { field: "repository.name", exists: true },
              { field: "action", equals: "opened" },
            ],
            prompt: "issue",
          },
          scripted: { secret: SECRET, script: "refuse.sh", prompt: "issue" },
        },
        {},
        { agent: recorderAgent() },
      ),
      files: { "agent/recorder.sh": RECORDER_AGENT, "scripts/refuse.sh": REFUSING_SCRIPT },
      // Only the history may say why: the log at INFO does not.
      logLevel: "info",
    });
    const body = '{"ref":"refs/heads/main"}';
    const post = (route: string, id: string, headers: Record<string, string>) =>
      postJson(gw.url(`/webhooks/${route}`), body, {
        "X-GitHub-Event": "push",
        "X-GitHub-Delivery": id,
        ...headers,
      });

    // (a) No signature header at all: a GitHub hook saved without a secret, as the reason says.
    expect((await post("gh", "r-none", {})).status).toBe(401);
    // (b) A signature of another body (a real HMAC with the right secret: it must not be written either).
    const wrong = hex(SECRET, '{"ref":"refs/heads/other"}');
    const expected = hex(SECRET, body);
    expect((await post("gh", "r-wrong", { "X-Hub-Signature-256": `sha256=${wrong}` })).status).toBe(401);
    // (c) A timestamped scheme (generic V2) signed right, 412 s before the gateway's clock.
    const nowSeconds = Math.floor(gw.clock.now() / 1000);
    const stale = signGenericV2(SECRET, body, nowSeconds - 412);
    expect((await post("gh", "r-stale", stale)).status).toBe(401);
    // The same signature passes once the gateway's clock is set back to within the tolerance: it was the
    // time alone.
    gw.clock.step(-(412 - TIMESTAMP_TOLERANCE_SECONDS) * 1000);
    expect((await post("gh", "r-stale-ok", stale)).body).toMatchObject({ status: "ignored" });
    // (d) A web page's request to an INSECURE_NO_AUTH route.
    expect((await post("open", "r-page", { Origin: "https://evil.example" })).status).toBe(401);

    // Signed requests the route ignores (200 ignored, the answer as before): by a filter, by its script.
    const signed = async (route: string, id: string, payload: string) =>
      postJson(gw.url(`/webhooks/${route}`), payload, {
        "X-GitHub-Event": "issues",
        "X-GitHub-Delivery": id,
        "X-Hub-Signature-256": `sha256=${hex(SECRET, payload)}`,
      });
    const closed = '{"action":"closed","repository":{"name":"svc"}}';
    expect((await signed("filtered", "r-filter", closed)).body).toEqual({
      status: "ignored",
      reason: "filter",
    });
    expect((await signed("scripted", "r-script", closed)).body).toEqual({
      status: "ignored",
      reason: "script",
    });

    const rows = await vi.waitFor(
      async () => {
        const res = await svc(gw.home, ["webhook", "deliveries", "--json"]);
        expect(res.code).toBe(0);
        const parsed = JSON.parse(res.stdout) as Array<Record<string, unknown>>;
        expect(parsed.map((r) => r.id)).toContain("r-script");
        return parsed;
      },
      { timeout: 20_000, interval: 100 },
    );
    const reasons = Object.fromEntries(rows.map((r) => [r.id, [r.status, r.outcome, r.reason]]));
    expect(reasons).toEqual({
      "r-none": [401, "Invalid signature", UNSIGNED_HOOK],
      "r-wrong": [401, "Invalid signature", "x-hub-signature-256 does not match"],
      "r-stale": [
        401,
        "Invalid signature",
        `x-webhook-timestamp is more than ${TIMESTAMP_TOLERANCE_SECONDS} s from the server clock`,
      ],
      // Ignored by the route's events: the note is made of the recorded event type when shown.
      "r-stale-ok": [200, "ignored", "event push is not among the route's events"],
      "r-page": [
        401,
        "Invalid signature",
        "a web page's request (Origin or Sec-Fetch-Site header) to an INSECURE_NO_AUTH route",
      ],
      "r-filter": [200, "ignored", "filter action did not match"],
      "r-script": [200, "ignored", "script exited with code 1"],
    });

    const table = await svc(gw.home, ["webhook", "deliveries", "gh"]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(
      /\sr-wrong\s+gh\s+push\s+401 Invalid signature\s+-\s+-\s+x-hub-signature-256 does not match$/m,
    );
    expect(table.stdout).toMatch(
      /\sr-none\s+.*401 Invalid signature\s+-\s+-\s+no signature: the code host's hook has no secret .* set the hook's Secret to the route secret$/m,
    );
    expect(table.stdout).toMatch(
      /\sr-stale\s+.*\s+x-webhook-timestamp is more than 300 s from the server clock$/m,
    );
    expect(table.stdout).toMatch(
      /\sr-stale-ok\s+gh\s+push\s+200 ignored\s+-\s+-\s+event push is not among the route's events$/m,
    );
    const ignored = await svc(gw.home, ["webhook", "deliveries"]);
    expect(ignored.code).toBe(0);
    expect(ignored.stdout).toMatch(
      /\sr-filter\s+filtered\s+issues\s+200 ignored\s+-\s+-\s+filter action did not match$/m,
    );
    expect(ignored.stdout).toMatch(
      /\sr-script\s+scripted\s+issues\s+200 ignored\s+-\s+-\s+script exited with code 1$/m,
    );

    // Nothing secret anywhere in the history: not the secret, nor the signature sent, nor the one expected.
    const history = readFileSync(join(gw.home.dir, "deliveries", "history.jsonl"), "utf8");
    expect(history).toContain('"reason":"x-hub-signature-256 does not match"');
    for (const secret of [SECRET, wrong, expected, stale["x-webhook-signature-v2"] as string])
      expect(history).not.toContain(secret);
    // Nor what the script wrote: its output may hold anything.
    expect(history).not.toContain("of-the-script");
    // The log at INFO said nothing of them (the reason goes to DEBUG only).
    expect(gw.logs().some((l) => l.msg.includes("does not match"))).toBe(false);
  });
});
