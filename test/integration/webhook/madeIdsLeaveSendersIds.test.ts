import { describe, expect, it } from "vitest";
import { fakeTelegramPerFile } from "../../fakes/telegram.js";
import { oneJobStore } from "../../helpers/cronJobs.js";
import { gatewayPerTest, HTTP_SERVERS, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { scrapedSample } from "../../helpers/metrics.js";

/**
 * Events whose sender names no delivery id (Stripe, Paddle, a load generator) get one the gateway makes,
 * which no sender can send again: with the local journal they must take no room in the idempotency cache,
 * or past its cap they push out the senders' ids, whose retries within the hour then run twice.
 */

const CAP = 5;
const FORGOTTEN = "svc_webhook_delivery_ids_forgotten_total";

const telegram = fakeTelegramPerFile();

const config = () =>
  webhookConfig(
    {
      run: { secret: "INSECURE_NO_AUTH", prompt: "run {n}" },
      grouped: {
        secret: "INSECURE_NO_AUTH",
        prompt: "group {n}",
        coalesce: { key: "n", window_seconds: 30 },
      },
      fire: { secret: "INSECURE_NO_AUTH", cron_job: "triage" },
      direct: {
        secret: "INSECURE_NO_AUTH",
        prompt: "direct {n}",
        deliver: "telegram",
        deliver_only: true,
        deliver_extra: { chat_id: "7" },
      },
    },
    { rate_limit: 10_000 },
    {
      agent: { provider: "echo" },
      platforms: { telegram: { enabled: true, token: "123:abc", base_url: telegram().url } },
    },
  );

const post = (gw: TestGateway, route: string, n: number, id?: string) =>
  postJson(gw.url(`/webhooks/${route}`), { n }, id === undefined ? {} : { "X-GitHub-Delivery": id });

describe.each(HTTP_SERVERS)("events without a delivery id, past the idempotency cache's cap (%s)", (http) => {
  const gateways = gatewayPerTest();

  it("leave a sender's id in it: its retry is still a duplicate, and no id is counted forgotten", async () => {
    const gw = await gateways.start({
      config: config(),
      files: {
        "cron/jobs.json": oneJobStore({
          name: "triage",
          prompt: "job triage",
          next_run: "2099-01-01T00:00:00.000Z",
        }),
      },
      http,
      seenIdsCap: CAP,
    });
    expect(await post(gw, "run", 0, "keep-me-1")).toMatchObject({ status: 202 });
    expect((await post(gw, "run", 0, "keep-me-1")).body).toEqual({ status: "duplicate" });

    // More than the cap's worth of each kind of id-less event: agent runs, coalesced events (each its own
    // group), cron job fires, direct deliveries.
    for (let n = 1; n <= 2 * CAP; n++) {
      expect(await post(gw, "run", n)).toMatchObject({ status: 202, body: { status: "accepted" } });
      expect(await post(gw, "grouped", n)).toMatchObject({ status: 202, body: { status: "coalesced" } });
      expect(await post(gw, "fire", n)).toMatchObject({ status: 202, body: { status: "accepted" } });
      expect(await post(gw, "direct", n)).toMatchObject({ status: 200, body: { status: "delivered" } });
    }

    expect((await post(gw, "run", 0, "keep-me-1")).body).toEqual({ status: "duplicate" });
    expect(await scrapedSample(gw.base, FORGOTTEN)).toBe(0);
    expect(gw.logs().filter((line) => line.msg.includes("forgotten before their hour"))).toEqual([]);

    // The senders' ids are still held to the cap, and one pushed out by them is counted.
    for (let i = 1; i <= CAP; i++) expect((await post(gw, "run", 0, `sender-${i}`)).status).toBe(202);
    expect(await scrapedSample(gw.base, FORGOTTEN)).toBe(1);
    expect((await post(gw, "run", 0, "keep-me-1")).status).toBe(202);
  });
});
