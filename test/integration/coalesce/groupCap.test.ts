import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COALESCE_GROUP_CAP } from "../../../src/actors/coalescer.js";
import {
  RECORDER_AGENT,
  readRun,
  recorderAgent,
  startTestGateway,
  type TestGateway,
  waitForRun,
  webhookConfig,
} from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * docs/coalescing-and-cron.md: the coalesce key is rendered from the payload, so a sender posting a new
 * key with each event would open a group each time, each kept for up to `max_wait_seconds`. The pending
 * groups are capped (100,000; 3 here): past it an event whose key opens no pending group is dispatched at
 * once, as one whose key does not resolve, and events for a pending group still join it.
 */
const OPEN = "INSECURE_NO_AUTH";
const CAP = 3;

describe("coalescing groups are capped against a flood of new keys", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      fakeTimers: true,
      coalesceGroupCap: CAP,
      files: { "agent/recorder.sh": RECORDER_AGENT },
      config: webhookConfig(
        {
          pr: {
            secret: OPEN,
            prompt: "pr {n}",
            coalesce: { key: "n", window_seconds: 3600, max_wait_seconds: 86400 },
          },
        },
        { rate_limit: 1000 },
        { agent: recorderAgent() },
      ),
    });
  });
  afterAll(() => gw.stop());

  const send = (n: number, id: string) => postJson(gw.url("/webhooks/pr"), { n }, { "x-request-id": id });

  it("the default cap is the run queue's", () => {
    expect(COALESCE_GROUP_CAP).toBe(100_000);
  });

  it("past the cap a new key is dispatched at once (202 accepted), a pending key still joins its group", async () => {
    // A sender inventing keys: the first CAP open groups, the rest run at once instead of piling up.
    const answers = [];
    for (let n = 0; n < 20; n++) answers.push((await send(n, `k${n}`)).body);
    expect(answers.slice(0, CAP)).toEqual(Array(CAP).fill({ status: "coalesced" }));
    expect(answers.slice(CAP).map((body) => (body as { status: string }).status)).toEqual(
      Array(20 - CAP).fill("accepted"),
    );
    expect((await waitForRun(gw, "k19")).prompt).toBe("pr 19");
    // The groups opened before the cap are still there: their keys keep coalescing.
    expect((await send(0, "k0-again")).body).toEqual({ status: "coalesced" });
    expect(readRun(gw.home, "k0")).toBeUndefined();
    expect(readRun(gw.home, "k0-again")).toBeUndefined();
    const warnings = gw.logs().filter((line) => line.msg.includes("coalescing groups are pending"));
    expect(warnings.map((line) => line.msg)).toEqual([
      `[webhook] pr: ${CAP} coalescing groups are pending, the most kept at once; an event whose key opens a new group is dispatched at once (not grouped) until some fire — a sender posting ever new coalesce keys?`,
    ]);
  });

  it("once the pending groups fire, new keys are grouped again", async () => {
    gw.clock.advance(3_600_000);
    await waitForRun(gw, "k0-again");
    expect((await send(100, "k100")).body).toEqual({ status: "coalesced" });
  });
});
