import { afterEach, expect, it } from "vitest";
import {
  RECORDER_AGENT,
  recorderAgent,
  startTestGateway,
  type TestGateway,
  waitForRun,
  webhookConfig,
} from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

let gw: TestGateway;
afterEach(() => gw.stop());

it("an event_type holding NUL reaches the agent and the route script as SVC_EVENT (NUL as U+FFFD) instead of failing the run", async () => {
  gw = await startTestGateway({
    files: {
      "agent/recorder.sh": RECORDER_AGENT,
      "scripts/event.sh": 'cat >/dev/null\nprintf \'{"seen": "%s"}\' "$SVC_EVENT"\n',
    },
    config: webhookConfig(
      {
        plain: { secret: "INSECURE_NO_AUTH" },
        scripted: { secret: "INSECURE_NO_AUTH", script: "event.sh", prompt: "{seen}" },
      },
      {},
      { agent: recorderAgent() },
    ),
  });
  const plain = await postJson(gw.url("/webhooks/plain"), '{"event_type":"a\\u0000b"}', {
    "X-Request-Id": "nul-1",
  });
  expect(plain.status).toBe(202);
  expect((await waitForRun(gw, "nul-1")).event).toBe("a\uFFFDb");
  const scripted = await postJson(gw.url("/webhooks/scripted"), '{"event_type":"c\\u0000d"}', {
    "X-Request-Id": "nul-2",
  });
  expect(scripted.status).toBe(202);
  expect((await waitForRun(gw, "nul-2")).prompt).toBe("c\uFFFDd");
});

it("an event_type past what an environment string may hold reaches the agent and the route script cut to 32 KiB instead of failing them with E2BIG", async () => {
  gw = await startTestGateway({
    files: {
      "agent/recorder.sh": RECORDER_AGENT,
      "scripts/length.sh": 'cat >/dev/null\nprintf \'{"seen": "%s"}\' "$(printf %s "$SVC_EVENT" | wc -c)"\n',
    },
    config: webhookConfig(
      {
        plain: { secret: "INSECURE_NO_AUTH" },
        scripted: { secret: "INSECURE_NO_AUTH", script: "length.sh", prompt: "{seen}" },
      },
      {},
      { agent: recorderAgent() },
    ),
  });
  // 150 000 bytes: past Linux's 128 KiB for one environment string; "é" is two bytes, so the cut at
  // 32 768 bytes falls on a whole character.
  const longEvent = `x${"é".repeat(75_000)}`.slice(0, 75_000);
  const plain = await postJson(gw.url("/webhooks/plain"), JSON.stringify({ event_type: longEvent }), {
    "X-Request-Id": "long-event-1",
  });
  expect(plain.status).toBe(202);
  expect((await waitForRun(gw, "long-event-1")).event).toBe(longEvent.slice(0, 16_384));
  const scripted = await postJson(gw.url("/webhooks/scripted"), JSON.stringify({ event_type: longEvent }), {
    "X-Request-Id": "long-event-2",
  });
  expect(scripted.status).toBe(202);
  // 1 + 16 383 "é" = 32 767 bytes (one more "é" would pass 32 768).
  expect((await waitForRun(gw, "long-event-2")).prompt).toBe("32767");
});
