import { afterEach, expect, it, vi } from "vitest";
import { SessionStore } from "../../../src/io/sessions/store.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { fakeClock, gatewayPerTest, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

const OPEN = "INSECURE_NO_AUTH";
const CHAT = "-100778";
const NOW = Date.parse("2030-01-10T12:00:00Z");
const perTest = gatewayPerTest();
const fakes: Array<{ close(): Promise<void> | void }> = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
});

// The deliverer was made without the gateway's clock, so a mirrored entry's `at` (and the session's
// `updated_at`) came from the machine's clock while the run journal and the delivery history used the
// gateway's: one delivery's records disagreed on when it happened.
it("a mirrored entry is dated by the gateway's clock, as its run journal line is", async () => {
  const telegram = await startFakeTelegram();
  fakes.push(telegram);
  const gw = await perTest.start({
    clock: fakeClock(NOW),
    config: webhookConfig(
      {
        pushes: {
          secret: OPEN,
          deliver: "telegram",
          deliver_only: true,
          mirror_to_session: true,
          prompt: "Pushed",
          deliver_extra: { chat_id: CHAT },
        },
      },
      {},
      { platforms: { telegram: { enabled: true, token: "123:abc", base_url: telegram.url } } },
    ),
  });
  const store = SessionStore.forProfile(gw.home.dir, undefined, () => new Date(NOW - 60_000));
  await store.openChat("telegram", CHAT);
  const answer = await postJson(gw.url("/webhooks/pushes"), {}, { "X-Request-ID": "m-1" });
  expect(answer.status).toBe(200);
  await vi.waitFor(() => expect(store.entries(`telegram:${CHAT}`)).toHaveLength(1), { interval: 20 });
  expect(store.entries(`telegram:${CHAT}`)[0]?.at).toBe(new Date(NOW).toISOString());
  // The index is rewritten after the transcript is appended (written and fsynced off the event loop).
  await vi.waitFor(
    () => expect(store.get(`telegram:${CHAT}`)?.updated_at).toBe(new Date(NOW).toISOString()),
    { interval: 20 },
  );
});
