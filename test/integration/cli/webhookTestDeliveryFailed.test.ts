import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { svc } from "./svc.js";

let gw: TestGateway;
let telegram: Awaited<ReturnType<typeof startFakeTelegram>>;
afterEach(async () => {
  await gw.stop();
  await telegram.close();
});

const CHAT_NOT_FOUND = {
  status: 400,
  json: { ok: false, error_code: 400, description: "Bad Request: chat not found" },
};

/**
 * A direct delivery the platform refuses is answered `502 Delivery failed`, its reason only in the gateway's
 * log (spec 7). `svc webhook test` and `redeliver` printed the 502 alone, nothing saying where the reason
 * is; they now add a note naming the log and the delivery ID its lines carry.
 */
describe("svc webhook test (and redeliver) of a direct delivery the platform refuses", {
  timeout: 90_000,
}, () => {
  it("notes where the reason is: the gateway's log, with the delivery ID to find its lines", async () => {
    telegram = await startFakeTelegram();
    gw = await startTestGateway({
      config: webhookConfig(
        {},
        {},
        { platforms: { telegram: { enabled: true, token: "123:abc", base_url: telegram.url } } },
      ),
    });
    gw.home.write(
      "webhook_subscriptions.json",
      JSON.stringify({
        "deploy-notes": {
          secret: "deploy-notes-secret-4417",
          deliver: "telegram",
          deliver_only: true,
          deliver_extra: { chat_id: "4242" },
          enabled: true,
        },
      }),
      0o600,
    );
    const port = String(gw.gateway.port);
    const log = `${gw.home.dir}/logs/gateway.log`;
    // The start's credentials check (getMe) must not take the refusal meant for the delivery.
    await vi.waitFor(() => expect(telegram.requests.some((r) => r.path.endsWith("/getMe"))).toBe(true), {
      timeout: 10_000,
    });

    telegram.enqueue(CHAT_NOT_FOUND);
    const failed = await svc(gw.home, ["webhook", "test", "deploy-notes", "--port", port]);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain('502 Bad Gateway\n{"error":"Delivery failed"}');
    const note =
      /Note: the gateway could not deliver deploy-notes's message to telegram; the answer gives no reason \(a sender must not see the platform's error\), the gateway's log does: grep -F -- (svc-test-[0-9a-f-]+) (\S+)\n/.exec(
        failed.stderr,
      );
    expect(note?.[2]).toBe(log);
    // The lines that ID finds say why.
    const lines = readFileSync(log, "utf8")
      .split("\n")
      .filter((line) => line.includes(note?.[1] ?? "?"));
    expect(lines.join("\n")).toContain("chat not found");

    telegram.enqueue(CHAT_NOT_FOUND);
    const again = await svc(gw.home, ["webhook", "redeliver", note?.[1] ?? "?", "--port", port]);
    expect(again.code).toBe(1);
    expect(again.stdout).toContain("502 Bad Gateway");
    expect(again.stderr).toMatch(
      new RegExp(`the gateway's log does: grep -F -- redelivery-[0-9a-f]{8}-${note?.[1]} ${log}\\n`),
    );

    // Delivered: nothing to note.
    const delivered = await svc(gw.home, ["webhook", "test", "deploy-notes", "--port", port]);
    expect(delivered.code).toBe(0);
    expect(delivered.stdout).toContain("200 OK");
    expect(delivered.stderr).not.toContain("Note:");

    // A prompt whose fields the test payload lacks went to the chat with its {placeholders} as written
    // (spec: a missing key stays literal), answered 200 delivered without a word: the note names them.
    await svc(gw.home, [
      "webhook",
      "subscribe",
      "deploy-notes",
      "--prompt",
      "Deploy {service} to {env.name}: {status}",
    ]);
    const testWith = (payload: string) =>
      svc(gw.home, ["webhook", "test", "deploy-notes", "--port", port, "--payload", payload]);
    const partial = await testWith('{"service":"api"}');
    expect(partial.stdout).toContain("200 OK");
    expect(partial.stderr).toBe(
      "Note: deploy-notes delivers its prompt as the message (deliver_only), and this payload has no env.name, status: the message went out with {env.name}, {status} as written — send a payload that has them (--payload)\n",
    );
    const whole = await testWith('{"service":"api","env":{"name":"prod"},"status":"ok"}');
    expect(whole.stderr).not.toContain("Note:");
    expect(telegram.requests.map((r) => (r.json as { text?: string } | undefined)?.text).slice(-2)).toEqual([
      "Deploy api to {env.name}: {status}",
      "Deploy api to prod: ok",
    ]);
  });
});
