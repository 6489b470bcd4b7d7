import { createHmac } from "node:crypto";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { Webhook as SvixWebhook } from "svix";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  RECORDER_AGENT,
  recorderAgent,
  startTestGateway,
  type TestGateway,
  waitForRun,
  webhookConfig,
} from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/** Spec rows where real senders and the spec's wording meet: each test goes through the real gateway. */

const OPEN = "INSECURE_NO_AUTH";
/** The Standard Webhooks reference secret, as a dashboard may hand it out without its prefix. */
const BARE = "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const WHSEC = `whsec_${BARE}`;

describe("conformance with real senders (spec 5, 6, 2.3, 2.4)", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      files: {
        "agent/recorder.sh": RECORDER_AGENT,
        "lists/senders.txt": "alice\n",
        "scripts/upper.sh": 'cat >/dev/null\necho \'{"title": "from script"}\'\n',
      },
      config: webhookConfig(
        {
          bare: { secret: BARE },
          whsec: { secret: WHSEC },
          invoices: { secret: WHSEC, events: ["invoice.paid"], prompt: "{type} {data.id}" },
          home_list: { secret: OPEN, filters: [{ field: "sender", in_file: "~/.svc/lists/senders.txt" }] },
          home_script: { secret: OPEN, script: "~/.svc/scripts/upper.sh", prompt: "{title}" },
        },
        { rate_limit: 1000 },
        { agent: recorderAgent() },
      ),
    });
  });
  afterAll(() => gw.stop());

  const post = (route: string, body: unknown, headers: Record<string, string> = {}) =>
    postJson(gw.url(`/webhooks/${route}`), body, headers);
  const nowSeconds = () => Math.floor(gw.clock.now() / 1000);

  it("Standard Webhooks: a secret configured without whsec_ verifies what the standardwebhooks library signs with it", async () => {
    const body = JSON.stringify({ type: "user.created" });
    const signature = new StandardWebhook(BARE).sign("msg_bare", new Date(gw.clock.now()), body);
    const headers = { "webhook-id": "msg_bare", "webhook-timestamp": String(nowSeconds()) };
    expect(await post("bare", body, { ...headers, "webhook-signature": signature })).toMatchObject({
      status: 202,
      body: { status: "accepted", delivery_id: "msg_bare" },
    });
    const forged = new StandardWebhook(`${BARE.slice(0, -4)}AAAA`).sign(
      "msg_bare2",
      new Date(gw.clock.now()),
      body,
    );
    expect(
      await post("bare", body, { ...headers, "webhook-id": "msg_bare2", "webhook-signature": forged }),
    ).toMatchObject({ status: 401, body: { error: "Invalid signature" } });
  });

  it("Standard Webhooks: with a whsec_ secret, a v1 signature keyed with the secret's text (whsec_ included) is refused", async () => {
    const body = '{"hello":"world"}';
    const ts = String(nowSeconds());
    const mac = createHmac("sha256", WHSEC).update(`msg_text.${ts}.${body}`).digest("base64");
    expect(
      await post("whsec", body, {
        "webhook-id": "msg_text",
        "webhook-timestamp": ts,
        "webhook-signature": `v1,${mac}`,
      }),
    ).toMatchObject({ status: 401, body: { error: "Invalid signature" } });
    const signed = new StandardWebhook(WHSEC).sign("msg_text", new Date(gw.clock.now()), body);
    expect(
      await post("whsec", body, {
        "webhook-id": "msg_text",
        "webhook-timestamp": ts,
        "webhook-signature": signed,
      }),
    ).toMatchObject({ status: 202, body: { delivery_id: "msg_text" } });
  });

  it("Svix / Standard Webhooks senders name the event in the body's type: the events list selects on it", async () => {
    const sign = (id: string, body: string) => ({
      "svix-id": id,
      "svix-timestamp": String(nowSeconds()),
      "svix-signature": new SvixWebhook(WHSEC).sign(id, new Date(gw.clock.now()), body),
    });
    const paid = JSON.stringify({ type: "invoice.paid", data: { id: "in_1" } });
    expect(await post("invoices", paid, sign("msg_paid", paid))).toMatchObject({
      status: 202,
      body: { status: "accepted", route: "invoices", event: "invoice.paid", delivery_id: "msg_paid" },
    });
    expect((await waitForRun(gw, "msg_paid")).prompt).toBe("invoice.paid in_1");
    const created = JSON.stringify({ type: "invoice.created", data: { id: "in_2" } });
    expect(await post("invoices", created, sign("msg_created", created))).toMatchObject({
      status: 200,
      body: { status: "ignored", event: "invoice.created" },
    });
  });

  it("in_file: ~/.svc/<path> names the active profile's data directory", async () => {
    expect(await post("home_list", { sender: "alice" })).toMatchObject({ status: 202 });
    expect(await post("home_list", { sender: "mallory" })).toMatchObject({
      status: 200,
      body: { status: "ignored", reason: "filter" },
    });
  });

  it("script: ~/.svc/scripts/<name> is the profile's scripts directory", async () => {
    const res = await post("home_script", { title: "original" }, { "X-Request-ID": "home-script-1" });
    expect(res).toMatchObject({ status: 202 });
    expect((await waitForRun(gw, "home-script-1")).prompt).toBe("from script");
  });
});
