import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDeliverer } from "../../../src/actors/deliver.js";
import { svcPaths } from "../../../src/config/paths.js";
import { checkTargets } from "../../../src/io/targets/check.js";
import { DeliveryError } from "../../../src/io/targets/target.js";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { sentTexts, startFakeTelegram } from "../../fakes/telegram.js";
import { tempHome } from "../../helpers/home.js";
import { message, registryFor } from "./support.js";

const TOKEN = "987654:VERY-SECRET-TOKEN";
let fake: FakeApi;
beforeAll(async () => {
  fake = await startFakeTelegram();
});
afterAll(() => fake.close());

function setup(settings: Record<string, unknown> = {}) {
  fake.requests.length = 0;
  const log = captureLogger();
  const registry = registryFor({
    telegram: { enabled: true, token: TOKEN, base_url: fake.url, home_channel: "42", ...settings },
  });
  const sleeps: number[] = [];
  const home = tempHome();
  const deliverer = createDeliverer({
    targets: registry,
    logger: log.logger,
    paths: svcPaths(home.dir),
    sleep: async (ms) => {
      sleeps.push(ms);
    },
  });
  return { log, registry, sleeps, deliverer, home };
}

const agent = (text = "hello") => ({
  target: "chat_1",
  message: message(text),
  mode: "agent" as const,
  mirrorToSession: false,
});
const direct = (text = "hello") => ({ ...agent(text), mode: "direct" as const });

describe("transient failures", () => {
  it("honours Retry-After on a 429 and then delivers (agent mode)", async () => {
    const { deliverer, sleeps, home } = setup();
    fake.enqueue({
      status: 429,
      headers: { "retry-after": "7" },
      json: { ok: false, error_code: 429, description: "Too Many Requests: retry after 7" },
    });
    await deliverer.deliver(agent());
    expect(sleeps).toEqual([7000]);
    expect(sentTexts(fake)).toEqual(["hello", "hello"]);
    home.cleanup();
  });

  it("reads Telegram's parameters.retry_after when no header is sent", async () => {
    const { deliverer, sleeps, home } = setup();
    fake.enqueue({
      status: 429,
      json: { ok: false, error_code: 429, description: "Too Many Requests", parameters: { retry_after: 3 } },
    });
    await deliverer.deliver(agent());
    expect(sleeps).toEqual([3000]);
    home.cleanup();
  });

  it("a Retry-After that is neither seconds nor an HTTP date (signed, hex, a header sent twice) gets the backoff, not an immediate retry", async () => {
    const { deliverer, sleeps, home } = setup();
    const busy = (retryAfter: string) => ({
      status: 503,
      headers: { "retry-after": retryAfter },
      text: "Service Unavailable",
    });
    // "5, 5" is how fetch joins two Retry-After headers (a proxy adding its own).
    fake.enqueue(busy("-1"), busy("0x10"), busy("5, 5"));
    await deliverer.deliver(agent());
    expect(sleeps).toEqual([1000, 2000, 4000]);
    expect(sentTexts(fake)).toEqual(["hello", "hello", "hello", "hello"]);
    home.cleanup();
  });

  it("a 429 whose Retry-After header is unreadable waits the body's retry_after", async () => {
    const { deliverer, sleeps, home } = setup();
    fake.enqueue({
      status: 429,
      headers: { "retry-after": "-1" },
      json: { ok: false, error_code: 429, description: "Too Many Requests", parameters: { retry_after: 3 } },
    });
    await deliverer.deliver(agent());
    expect(sleeps).toEqual([3000]);
    home.cleanup();
  });

  it("a wait of 0 (Retry-After: 0, retry_after: 0, an HTTP date already past) gets the backoff, not an immediate retry", async () => {
    const { deliverer, sleeps, home } = setup();
    const limited = (headers: Record<string, string>, retryAfter?: number) => ({
      status: 429,
      headers,
      json: {
        ok: false,
        error_code: 429,
        description: "Too Many Requests",
        ...(retryAfter === undefined ? {} : { parameters: { retry_after: retryAfter } }),
      },
    });
    fake.enqueue(
      limited({ "retry-after": "0" }),
      limited({}, 0),
      limited({ "retry-after": "Sun, 06 Nov 1994 08:49:37 GMT" }),
    );
    await deliverer.deliver(agent());
    // Sent again at once, each 429 would meet the same spent quota: 4 requests within milliseconds, then a
    // delivery failed for good.
    expect(sleeps).toEqual([1000, 2000, 4000]);
    expect(sentTexts(fake)).toEqual(["hello", "hello", "hello", "hello"]);
    home.cleanup();
  });

  it("a 429 whose Retry-After header says 0 waits the body's retry_after", async () => {
    const { deliverer, sleeps, home } = setup();
    fake.enqueue({
      status: 429,
      headers: { "retry-after": "0" },
      json: { ok: false, error_code: 429, description: "Too Many Requests", parameters: { retry_after: 3 } },
    });
    await deliverer.deliver(agent());
    expect(sleeps).toEqual([3000]);
    home.cleanup();
  });

  it("backs off exponentially on 5xx and gives up after 3 retries", async () => {
    const { deliverer, sleeps, log, home } = setup();
    const bad = { status: 502, text: "Bad Gateway" };
    fake.enqueue(bad, bad, bad, bad);
    await expect(deliverer.deliver(agent())).rejects.toThrow(/HTTP 502 — Bad Gateway/);
    expect(sleeps).toEqual([1000, 2000, 4000]);
    expect(fake.requests).toHaveLength(4);
    expect(
      log.messages().some((m) => m.includes("telegram failed for route alerts") && m.includes("Bad Gateway")),
    ).toBe(true);
    // Each retry is logged with the platform named once.
    const retries = log.messages().filter((m) => m.includes("— retry"));
    expect(retries).toHaveLength(3);
    expect(retries[0]).toMatch(
      /^\[delivery\] telegram: (?!telegram: ).*HTTP 502 — Bad Gateway — retry 1\/3 in 1000 ms$/,
    );
    home.cleanup();
  });

  it("a failure still transient after the last retry says that the retries ran out", async () => {
    const { deliverer, log, home } = setup();
    const bad = { status: 503, text: "Service Unavailable" };
    fake.enqueue(bad, bad, bad, bad);
    await expect(deliverer.deliver(agent())).rejects.toThrow(
      "telegram: sendMessage: HTTP 503 — Service Unavailable — gave up after 3 retries",
    );
    expect(log.messages()).toContain(
      "[delivery] telegram failed for route alerts: telegram: sendMessage: HTTP 503 — Service Unavailable — gave up after 3 retries",
    );
    home.cleanup();
  });

  it("a 429 asking for a longer wait than a delivery waits fails at once, saying why it was not retried", async () => {
    const { deliverer, sleeps, log, home } = setup();
    fake.enqueue({
      status: 429,
      headers: { "retry-after": "600" },
      json: { ok: false, error_code: 429, description: "Too Many Requests: retry after 600" },
    });
    await expect(deliverer.deliver(agent())).rejects.toThrow(
      "telegram: sendMessage: HTTP 429 — Too Many Requests: retry after 600 — not retried: the platform asked to wait 600 s, longer than the 300 s a delivery waits",
    );
    expect(sleeps).toEqual([]);
    expect(fake.requests).toHaveLength(1);
    expect(log.messages().filter((m) => m.includes("failed for route alerts"))).toEqual([
      "[delivery] telegram failed for route alerts: telegram: sendMessage: HTTP 429 — Too Many Requests: retry after 600 — not retried: the platform asked to wait 600 s, longer than the 300 s a delivery waits",
    ]);
    home.cleanup();
  });

  it("a direct delivery's transient failure is reported as it came (one attempt is all it makes)", async () => {
    const { deliverer, home } = setup();
    fake.enqueue({
      status: 429,
      headers: { "retry-after": "600" },
      json: { ok: false, description: "Too Many" },
    });
    const error = (await deliverer.deliver(direct()).catch((e: unknown) => e)) as Error;
    expect(error.message).toBe("telegram: sendMessage: HTTP 429 — Too Many");
    home.cleanup();
  });

  it("a platform's error cut at 300 characters right inside an emoji leaves the emoji out whole", async () => {
    const { deliverer, home } = setup();
    // The description's first half of the emoji is the quote's 300th UTF-16 unit.
    fake.enqueue({ status: 400, json: { ok: false, description: `${"x".repeat(299)}😀 after the cut` } });
    const error = (await deliverer.deliver(direct()).catch((e: unknown) => e)) as Error;
    expect(error.message).toBe(`telegram: sendMessage: HTTP 400 — ${"x".repeat(299)}`);
    home.cleanup();
  });

  it("an HTML page's title cut at 120 characters right inside an emoji leaves the emoji out whole", async () => {
    const { deliverer, home } = setup();
    const page = `<html><head><title>${"x".repeat(119)}😀 Bad Gateway</title></head><body></body></html>`;
    fake.enqueue({ status: 502, text: page, headers: { "content-type": "text/html" } });
    const error = (await deliverer.deliver(direct()).catch((e: unknown) => e)) as Error;
    expect(error.message).toContain(
      `an HTML page "${"x".repeat(119)}" (${page.length} characters, not shown)`,
    );
    home.cleanup();
  });

  it("a 2xx answer that is no JSON, quoted cut at 80 characters right inside an emoji, leaves the emoji out whole", async () => {
    const { deliverer, home } = setup();
    fake.enqueue({
      status: 200,
      text: `${"x".repeat(79)}😀 portal`,
      headers: { "content-type": "text/plain" },
    });
    const error = (await deliverer.deliver(direct()).catch((e: unknown) => e)) as Error;
    expect(error.message).toContain(`HTTP 200 with text/plain "${"x".repeat(79)}", where`);
    home.cleanup();
  });

  it("does not retry in direct mode: one attempt, then the failure", async () => {
    const { deliverer, sleeps, home } = setup();
    fake.enqueue({ status: 503, text: "unavailable" });
    await expect(deliverer.deliver(direct())).rejects.toBeInstanceOf(DeliveryError);
    expect(sleeps).toEqual([]);
    expect(fake.requests).toHaveLength(1);
    home.cleanup();
  });

  it("a chat_id the payload rendered empty or blank is refused, never sent to the home channel", async () => {
    const { deliverer, home } = setup();
    for (const rendered of ["", "   "]) {
      const msg = { ...direct(), message: message("steered", { chat_id: rendered }) };
      await expect(deliverer.deliver(msg)).rejects.toThrow(
        'telegram: deliver_extra.chat_id of route "alerts" rendered empty — the message is not sent (never redirected to another chat)',
      );
    }
    expect(fake.requests).toHaveLength(0);
    // Without a chat_id at all the home channel is where it goes.
    await deliverer.deliver(direct("home"));
    expect(fake.requests.map((r) => (r.json as { chat_id?: unknown }).chat_id)).toEqual([42]);
    home.cleanup();
  });

  it("an sms number or email address the payload rendered empty names what it is", async () => {
    const registry = registryFor({
      sms: {
        enabled: true,
        account_sid: "AC1",
        auth_token: "t",
        from: "+15550000000",
        base_url: "http://127.0.0.1:9",
      },
      email: { enabled: true, host: "127.0.0.1", port: 9, from: "svc@example.org" },
    });
    await expect(registry.get("sms")?.send(message("x", { to: " " }))).rejects.toThrow(
      'sms: deliver_extra.to of route "alerts" rendered empty — the message is not sent (never redirected to another number)',
    );
    await expect(registry.get("email")?.send(message("x", { to: "" }))).rejects.toThrow(
      'email: deliver_extra.to of route "alerts" rendered empty — the message is not sent (never redirected to another address)',
    );
  });

  it("does not retry a permanent refusal (400)", async () => {
    const { deliverer, sleeps, home } = setup();
    fake.enqueue({ status: 400, json: { ok: false, description: "Bad Request: chat not found" } });
    await expect(deliverer.deliver(agent())).rejects.toThrow(/chat not found/);
    expect(sleeps).toEqual([]);
    home.cleanup();
  });

  it("a fractional timeout_seconds (2.01 s: 2009.9999… ms) bounds the request and the message is delivered", async () => {
    const { deliverer, home } = setup({ timeout_seconds: 2.01 });
    await deliverer.deliver(direct("on time"));
    expect(sentTexts(fake)).toEqual(["on time"]);
    home.cleanup();
  });

  it("times out a slow platform and retries it as transient", async () => {
    const { deliverer, sleeps, home } = setup({ timeout_seconds: 0.2 });
    fake.enqueue({ delayMs: 1000, json: { ok: true, result: {} } });
    await deliverer.deliver(agent());
    expect(sleeps).toEqual([1000]);
    expect(fake.requests).toHaveLength(2);
    home.cleanup();
  });

  it("retries only the failed part of a split message, not the parts already sent", async () => {
    const { deliverer, home } = setup();
    const text = `${"a".repeat(4000)}\n${"b".repeat(4000)}\n`;
    fake.enqueue({ json: { ok: true, result: {} } }, { status: 500, text: "oops" });
    await deliverer.deliver(agent(text));
    expect(sentTexts(fake).map((t) => t[0])).toEqual(["a", "b", "b"]);
    home.cleanup();
  });

  it("a final failure after earlier parts went out says which part failed and that the first were delivered", async () => {
    const { deliverer, log, home } = setup();
    const text = `${"a".repeat(4000)}\n${"b".repeat(4000)}\n${"c".repeat(100)}`;
    fake.enqueue(
      { json: { ok: true, result: {} } },
      {
        status: 400,
        json: { ok: false, error_code: 400, description: "Bad Request: message thread not found" },
      },
    );
    await expect(deliverer.deliver(agent(text))).rejects.toThrow(
      "telegram: sendMessage: HTTP 400 — Bad Request: message thread not found (part 2 of 3; part 1 was delivered)",
    );
    expect(sentTexts(fake).map((t) => t[0])).toEqual(["a", "b"]);
    expect(log.messages().some((m) => m.endsWith("(part 2 of 3; part 1 was delivered)"))).toBe(true);
    home.cleanup();
  });

  it("treats a refused connection as transient and never puts the token in an error or a log line", async () => {
    const closed = await startFakeApi();
    const url = closed.url;
    await closed.close();
    const { deliverer, log, sleeps, home } = setup({ base_url: url });
    const error = await deliverer.deliver(agent()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeliveryError);
    // What fetch says (ECONNREFUSED) gets where nothing listened and the key to check, as a model's or an
    // MCP server's url does: a base_url with a wrong port (or a local API not started) said nothing more.
    expect((error as DeliveryError).message).toBe(
      `telegram: sendMessage: connection failed (ECONNREFUSED) — nothing listens on port ${new URL(url).port} of 127.0.0.1: start the server there, or check platforms.telegram.base_url — gave up after 3 retries`,
    );
    expect(sleeps).toHaveLength(3);
    const everything = `${(error as Error).message}\n${log.lines().join("\n")}`;
    expect(everything).not.toContain("VERY-SECRET-TOKEN");
    expect(everything).not.toContain("/bot");
    home.cleanup();
  });

  it("a base_url on a port fetch refuses (10080, 6666, ...) fails at once, saying so, instead of retrying a 'connection failed'", async () => {
    const { deliverer, sleeps, home } = setup({ base_url: "http://127.0.0.1:10080" });
    await expect(deliverer.deliver(agent())).rejects.toThrow(
      /telegram: sendMessage: not sent — the base_url's port is one HTTP clients refuse/,
    );
    expect(sleeps).toHaveLength(0);
    home.cleanup();
  });

  it("refuses a target that is not enabled", async () => {
    const { deliverer, home } = setup();
    await expect(deliverer.deliver({ ...agent(), target: "discord" })).rejects.toThrow(
      /"discord" is not enabled/,
    );
    home.cleanup();
  });
});

describe("startup credentials check", () => {
  it("logs connected with the bot name, or failed with the platform's error and no token", async () => {
    const { registry, log, home } = setup();
    expect(await checkTargets(registry, log.logger)).toEqual({ log: "connected", telegram: "connected" });
    expect(log.messages()).toContain("[delivery] telegram: connected as @svc_test_bot");
    expect(registry.state("chat_1")).toBe("connected");

    fake.enqueue({ status: 401, json: { ok: false, error_code: 401, description: "Unauthorized" } });
    expect(await checkTargets(registry, log.logger)).toMatchObject({ telegram: "failed" });
    expect(log.messages().at(-1)).toBe(
      "[delivery] telegram: credentials check failed — telegram: getMe: HTTP 401 — Unauthorized — the platform refused the credentials: check platforms.telegram.token",
    );
    expect(log.lines().join("\n")).not.toContain("VERY-SECRET-TOKEN");
    expect(registry.state("telegram")).toBe("failed");
    home.cleanup();
  });
});
