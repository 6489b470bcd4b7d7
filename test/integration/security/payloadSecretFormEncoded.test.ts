import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { historyOfIds, type RequestRecord } from "../../../src/io/stores/deliveryHistory.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { svc } from "../cli/svc.js";

/** Go's url.QueryEscape: `~` kept, `*` (and every other character but letters, digits, `-_.~`) escaped. */
const queryEscape = (text: string) =>
  encodeURIComponent(text)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replaceAll("%20", "+");
/** Go's encoding/json: `<`, `>` and `&` as `\u003c`, `\u003e` and `\u0026`. */
const goJson = (value: unknown) =>
  JSON.stringify(value).replace(/[<>&]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`);

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({
    config: webhookConfig({
      tilde: { secret: "ab~cd*ef12x", prompt: "push" },
      amp: { secret: "s3cr&t-9xyz", prompt: "push" },
      space: { secret: "ab cd~ef12", prompt: "push" },
      spaceStar: { secret: "ab cd*ef12", prompt: "push" },
      spaceAmp: { secret: "my secret&12", prompt: "push" },
      endsInBackslash: { secret: "abcd/ef12\\", prompt: "push" },
      startsWithQuote: { secret: '"xb/bx2//', prompt: "push" },
    }),
  });
});
afterAll(() => gw.stop());

/**
 * Gogs sends a form's payload as `payload=` and Go's url.QueryEscape of Go's JSON, the hook's secret in it: that
 * writes the secret otherwise than any form the history searched (`*` as `%2A` beside a `~` kept; `&` as `\u0026`,
 * then `%5Cu0026`), and the history kept it as sent. Go writes a space as `+`, and a secret holding one was kept
 * as sent too: the `+` was no space to the percent reading.
 */
it.each([
  ["tilde", "ab~cd*ef12x", "ab~cd%2Aef12x"],
  ["amp", "s3cr&t-9xyz", "s3cr%5Cu0026t-9xyz"],
  ["space", "ab cd~ef12", "ab+cd~ef12"],
  ["spaceStar", "ab cd*ef12", "ab+cd%2Aef12"],
  ["spaceAmp", "my secret&12", "my+secret%5Cu002612"],
])(
  "a Gogs form payload's secret on route %s is [redacted] in the delivery history",
  async (route, secret, sent) => {
    const body = `payload=${queryEscape(goJson({ secret, ref: "refs/heads/main", pusher: { login: "a b" } }))}`;
    expect(body).toContain(sent);
    const delivery = `gogs-form-${route}`;
    const answer = await postJson(gw.url(`/webhooks/${route}`), body, {
      "content-type": "application/x-www-form-urlencoded",
      "X-Gogs-Event": "push",
      "X-Gogs-Delivery": delivery,
      "X-Gogs-Signature": createHmac("sha256", secret).update(body).digest("hex"),
    });
    expect(answer.status).toBe(202);
    const dir = join(gw.home.dir, "deliveries");
    await vi.waitFor(() => expect(readFileSync(join(dir, "history.jsonl"), "utf8")).toContain(delivery));
    const history = readFileSync(join(dir, "history.jsonl"), "utf8");
    expect(history).not.toContain(sent);
    const [record] = historyOfIds(dir, (id) => id === delivery) as RequestRecord[];
    expect(record).toMatchObject({ kind: "request", status: 202, outcome: "accepted" });
    expect(record?.payload).toBe(body.replace(sent, "[redacted]"));
  },
);

/**
 * A secret starting with `"` or `\`, or ending in `\`, is written in the JSON escaped (`abcd/ef12\\`,
 * `\"xb/bx2//`), then percent-encoded (`%5C%5C`, `%5C%22`). Its own percent-encoded form is inside that, and was
 * hidden first, leaving half of the JSON escape (`[redacted]%5C%22`, `%5C[redacted]%22`): the kept payload was no
 * JSON, and redelivering it was answered 400 Invalid JSON body.
 */
it.each([
  ["endsInBackslash", "abcd/ef12\\", "abcd%2Fef12%5C%5C"],
  ["startsWithQuote", '"xb/bx2//', "%5C%22xb%2Fbx2%2F%2F"],
])(
  "a Gogs form payload's secret on route %s is [redacted] with its JSON escape, and the delivery redelivered",
  { timeout: 60_000 },
  async (route, secret, sent) => {
    const json = goJson({ secret, ref: "refs/heads/main" });
    const body = `payload=${queryEscape(json)}`;
    expect(body).toContain(sent);
    const delivery = `gogs-form-${route}`;
    const answer = await postJson(gw.url(`/webhooks/${route}`), body, {
      "content-type": "application/x-www-form-urlencoded",
      "X-Gogs-Event": "push",
      "X-Gogs-Delivery": delivery,
      "X-Gogs-Signature": createHmac("sha256", secret).update(body).digest("hex"),
    });
    expect(answer.status).toBe(202);
    const dir = join(gw.home.dir, "deliveries");
    await vi.waitFor(() => expect(readFileSync(join(dir, "history.jsonl"), "utf8")).toContain(delivery));
    const [record] = historyOfIds(dir, (id) => id === delivery) as RequestRecord[];
    expect(record?.payload).toBe(body.replace(sent, "[redacted]"));
    const kept = decodeURIComponent(String(record?.payload).slice("payload=".length).replaceAll("+", " "));
    expect(JSON.parse(kept)).toEqual({ secret: "[redacted]", ref: "refs/heads/main" });
    const again = await svc(gw.home, ["webhook", "redeliver", delivery, "--port", String(gw.gateway.port)]);
    expect(again).toMatchObject({ code: 0, stdout: expect.stringContaining("202 Accepted") });
  },
);
