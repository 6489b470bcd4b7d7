import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

const ROUTE_SECRET = "route-secret-7Q1x";
const GLOBAL_SECRET = "global-secret-9W2z";
const hex = (key: string, text: string) => createHmac("sha256", key).update(text).digest("hex");

let gw: TestGateway;
afterEach(() => gw.stop());

// Gogs and Gitea before 1.14 send the hook's secret inside the payload (`"secret": "..."`) besides signing it.
describe("delivery history: a payload that carries the route's own secret", () => {
  it("is kept with the secret [redacted] (as JSON and as a form's payload field), the rest of the body as sent", async () => {
    gw = await startTestGateway({
      config: webhookConfig(
        {
          own: { secret: ROUTE_SECRET, prompt: "push" },
          global: { prompt: "push" },
        },
        { secret: GLOBAL_SECRET },
      ),
    });
    // A form is signed over its payload field's JSON, as Gitea signs it.
    const post = (
      route: string,
      secret: string,
      body: string,
      id: string,
      contentType?: string,
      signed = body,
    ) =>
      postJson(gw.url(`/webhooks/${route}`), body, {
        "X-Gitea-Event": "push",
        "X-Gitea-Delivery": id,
        "X-Gitea-Signature": hex(secret, signed),
        ...(contentType === undefined ? {} : { "content-type": contentType }),
      });
    const json = `{"secret":"${ROUTE_SECRET}","ref":"refs/heads/main"}`;
    expect((await post("own", ROUTE_SECRET, json, "g-json")).status).toBe(202);
    const globalJson = `{"secret":"${GLOBAL_SECRET}","ref":"refs/heads/main"}`;
    expect((await post("global", GLOBAL_SECRET, globalJson, "g-global")).status).toBe(202);
    const inForm = `{"secret":"${ROUTE_SECRET}","ref":"x"}`;
    const form = `payload=${encodeURIComponent(inForm)}`;
    const formType = "application/x-www-form-urlencoded";
    expect((await post("own", ROUTE_SECRET, form, "g-form", formType, inForm)).status).toBe(202);
    const file = join(gw.home.dir, "deliveries", "history.jsonl");
    // Written at the end of the turn that answered: the three records are there once the last is.
    const history = await vi.waitFor(() => {
      const text = readFileSync(file, "utf8");
      expect(text).toContain('"id":"g-form"');
      return text;
    });
    expect(history).not.toContain(ROUTE_SECRET);
    expect(history).not.toContain(GLOBAL_SECRET);
    const payloads = history
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { kind: string; id: string; payload?: unknown })
      .filter((r) => r.kind === "request");
    const byId = new Map(payloads.map((r) => [r.id, r.payload]));
    expect(byId.get("g-json")).toEqual({ secret: "[redacted]", ref: "refs/heads/main" });
    expect(byId.get("g-global")).toEqual({ secret: "[redacted]", ref: "refs/heads/main" });
    expect(byId.get("g-form")).toBe(
      `payload=${encodeURIComponent('{"secret":"')}[redacted]${encodeURIComponent('","ref":"x"}')}`,
    );
  });

  // Each form is one more search of every accepted body: base64 forms made a 64-hex secret's six searches.
  it("is looked for as senders write it, not in base64: a base64 run that holds the secret is kept as sent", async () => {
    const secret = hex("a route", "its secret");
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    gw = await startTestGateway({ config: webhookConfig({ gitea: { secret, prompt: "push" } }) });
    const encoded = Buffer.from(`ci:${secret}`).toString("base64");
    const body = `{"secret":"${secret}","note":"${encoded}"}`;
    const sent = await postJson(gw.url("/webhooks/gitea"), body, {
      "X-Gitea-Event": "push",
      "X-Gitea-Delivery": "g-base64",
      "X-Gitea-Signature": hex(secret, body),
    });
    expect(sent.status).toBe(202);
    const file = join(gw.home.dir, "deliveries", "history.jsonl");
    const record = await vi.waitFor(() => {
      const line = readFileSync(file, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { kind: string; id: string; payload?: unknown })
        .find((r) => r.kind === "request" && r.id === "g-base64");
      expect(line).toBeDefined();
      return line;
    });
    expect(record?.payload).toEqual({ secret: "[redacted]", note: encoded });
  });
});
