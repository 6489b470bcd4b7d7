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
