import { createHmac, randomUUID } from "node:crypto";
import { sign } from "@octokit/webhooks-methods";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { githubExampleSets, type Payload } from "../../helpers/githubExamples.js";
import { postJson } from "../../helpers/http.js";

/**
 * Every real GitHub payload of @octokit/webhooks-examples, signed by GitHub's own signing library and
 * sent with GitHub's header set, as JSON and as a form (`payload=<json>`), to a route with the default
 * dump (spec 2.5 rule 5) and to one with a nested-key prompt and an `action` filter (spec 2.3, 2.5).
 */

const SECRET = "replay-secret";
const PROMPT =
  "repo={repository.full_name} by={sender.login} title={pull_request.title} action={action} " +
  "id={repository.id} private={repository.private} merged={pull_request.merged_at} " +
  "labels={pull_request.labels} pr={pull_request}\n{__raw__}";
const all = githubExampleSets.flatMap((set) => set.examples.map((payload) => ({ event: set.name, payload })));

/** Spec 2.5 rules 3-5, written independently of svc: JSON cut at 2000/4000 UTF-16 units, whole pairs. */
function dump(payload: unknown): string {
  return cut(JSON.stringify(payload, null, 2), 4000);
}

function cut(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const head = text.slice(0, limit);
  const last = head.charCodeAt(limit - 1);
  return last >= 0xd800 && last <= 0xdbff ? head.slice(0, -1) : head;
}

/** Spec 2.5 rules 1-3 for the keys PROMPT uses: strings as-is, a missing key stays literal. */
function render(payload: Payload): string {
  const at = (path: string): string => {
    let value: unknown = payload;
    for (const key of path.split(".")) {
      if (typeof value !== "object" || value === null || !Object.hasOwn(value, key)) return `{${path}}`;
      value = (value as Payload)[key];
    }
    if (typeof value === "string") return value;
    return typeof value === "object" && value !== null
      ? cut(JSON.stringify(value), 2000)
      : JSON.stringify(value);
  };
  return PROMPT.replace(/\{([a-z_.]+)\}/g, (_, path: string) =>
    path === "__raw__" ? dump(payload) : at(path),
  );
}

interface Sent {
  readonly route: string;
  readonly event: string;
  readonly payload: Payload;
  readonly delivery: string;
  readonly status: number;
  readonly body: Payload;
}

describe.each(["uws", "node"] as const)(
  "replaying every @octokit/webhooks-examples payload (%s server)",
  (http) => {
    let gw: TestGateway;
    const sent: Sent[] = [];

    async function send(route: string, event: string, payload: Payload, form: boolean, json?: string) {
      const text = json ?? JSON.stringify(payload);
      // GitHub's form body is www-form encoded: spaces as `+`, everything else percent-escaped.
      const body = form ? new URLSearchParams({ payload: text }).toString() : text;
      const delivery = randomUUID();
      // Over node:http as fetch sends it (helpers/http.ts): fetch's client cost a quarter of the file's CPU.
      const res = await postJson(gw.url(`/webhooks/${route}`), body, {
        "User-Agent": "GitHub-Hookshot/6d2b3c1",
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery,
        "X-GitHub-Hook-ID": "492345432",
        "X-GitHub-Hook-Installation-Target-ID": "79929171",
        "X-GitHub-Hook-Installation-Target-Type": "repository",
        "X-Hub-Signature": `sha1=${createHmac("sha1", SECRET).update(body).digest("hex")}`,
        "X-Hub-Signature-256": await sign(SECRET, body),
        Accept: "*/*",
        // Lower case, as the helper's own default it replaces (a Headers takes both spellings as one name).
        "content-type": form ? "application/x-www-form-urlencoded" : "application/json",
      });
      const answer = res.body as Payload;
      sent.push({ route, event, payload, delivery, status: res.status, body: answer });
    }

    function replies(): Map<string, string> {
      const out = new Map<string, string>();
      for (const line of gw.logs()) {
        const match = /^\[webhook\] (\w+) reply:\n/.exec(line.msg);
        if (match !== null) out.set(String(line.delivery_id), line.msg.slice(match[0].length));
      }
      return out;
    }

    async function repliesFor(count: number): Promise<Map<string, string>> {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const got = replies();
        if (got.size >= count || Date.now() > deadline) return got;
        await new Promise((r) => setTimeout(r, 50));
      }
    }

    beforeAll(async () => {
      gw = await startTestGateway({
        http,
        config: webhookConfig(
          {
            dump: { secret: SECRET, deliver: "log" },
            tmpl: {
              secret: SECRET,
              deliver: "log",
              prompt: PROMPT,
              filters: [{ field: "action", exists: true }],
            },
          },
          { rate_limit: 100_000 },
          { agent: { provider: "echo", max_concurrent_runs: 16 } },
        ),
      });
      const jobs: Array<() => Promise<void>> = [];
      for (const form of [false, true])
        for (const route of ["dump", "tmpl"])
          for (const { event, payload } of all) jobs.push(() => send(route, event, payload, form));
      for (let i = 0; i < jobs.length; i += 48) await Promise.all(jobs.slice(i, i + 48).map((job) => job()));
    }, 30_000);
    afterAll(() => gw.stop());

    it("covers the whole package: hundreds of payloads, dozens of events", () => {
      expect(all.length).toBeGreaterThan(300);
      expect(new Set(all.map((e) => e.event)).size).toBeGreaterThan(50);
      expect(sent).toHaveLength(all.length * 4);
      const count = (status: number, key: unknown) =>
        sent.filter((s) => s.status === status && (s.body.reason ?? s.body.event) === key).length;
      expect(count(200, "ping")).toBeGreaterThan(0);
      expect(count(200, "filter")).toBeGreaterThan(0);
      expect(sent.filter((s) => s.status === 202).length).toBeGreaterThan(all.length * 2);
    });

    it("answers each one as the spec says: ping ignored by event, no action ignored by filter, else 202", () => {
      const wrong: string[] = [];
      for (const s of sent) {
        const expected =
          s.event === "ping"
            ? { status: 200, body: { status: "ignored", event: "ping" } }
            : s.route === "tmpl" && !Object.hasOwn(s.payload, "action")
              ? { status: 200, body: { status: "ignored", reason: "filter" } }
              : {
                  status: 202,
                  body: { status: "accepted", route: s.route, event: s.event, delivery_id: s.delivery },
                };
        if (s.status !== expected.status || JSON.stringify(s.body) !== JSON.stringify(expected.body))
          wrong.push(
            `${s.route} ${s.event}/${String(s.payload.action)}: ${s.status} ${JSON.stringify(s.body)}`,
          );
      }
      expect(wrong).toEqual([]);
    });

    it("each accepted run's reply is the rendered prompt, or the dump cut at 4000 characters", async () => {
      const accepted = sent.filter((s) => s.status === 202);
      const got = await repliesFor(accepted.length);
      const wrong: string[] = [];
      for (const s of accepted) {
        const want = s.route === "dump" ? dump(s.payload) : render(s.payload);
        if (got.get(s.delivery) !== want) wrong.push(`${s.route} ${s.event}/${String(s.payload.action)}`);
      }
      expect(wrong).toEqual([]);
      expect(accepted.some((s) => JSON.stringify(s.payload, null, 2).length > 4000)).toBe(true);
    });

    it("a 64-bit id keeps all its digits and an emoji that is the 4000th character is kept whole, as JSON and as a form", async () => {
      const push = all.find((e) => e.event === "push")?.payload as Payload;
      const big = (text: string) => text.replace('"BIG"', "12345678901234567890");
      const head = big(JSON.stringify({ big_id: "BIG", note: "", ...push }, null, 2));
      // Pad `note` so the emoji's first half is character 4000 of the dump.
      const at = head.indexOf('"note": "') + '"note": "'.length;
      const payload = { big_id: "BIG", note: `${"é".repeat(3999 - at)}😀 ünïcödé`, ...push };
      const json = big(JSON.stringify(payload));
      const seen = replies().size;
      const before = sent.length;
      await send("dump", "push", payload, false, json);
      await send("dump", "push", payload, true, json);
      const mine = sent.slice(before);
      expect(mine.map((s) => s.status)).toEqual([202, 202]);
      const got = await repliesFor(seen + 2);
      for (const s of mine) {
        const reply = got.get(s.delivery) as string;
        expect(reply.startsWith('{\n  "big_id": 12345678901234567890,\n')).toBe(true);
        // 4000 characters: 3999 of one UTF-16 unit each, then the emoji (two units), never half of it.
        expect(reply).toHaveLength(4001);
        expect(reply.endsWith("é😀")).toBe(true);
      }
    });
  },
);
