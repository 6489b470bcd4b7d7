import { join } from "node:path";
import { setImmediate as turn } from "node:timers/promises";
import { sign as signGithub } from "@octokit/webhooks-methods";
import { afterEach, describe, expect, it } from "vitest";
import {
  NOT_RECORDED_PERIOD_MS,
  REFUSED_RECORDS_BURST,
} from "../../../src/gateway/refusedRecordAllowance.js";
import {
  type NotRecordedRecord,
  type RequestRecord,
  readHistory,
} from "../../../src/io/stores/deliveryHistory.js";
import {
  RECORDER_AGENT,
  recorderAgent,
  startTestGateway,
  type TestGateway,
  waitForRun,
  webhookConfig,
} from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { svc } from "./svc.js";

const SECRET = "refused-flood-secret-8817";
const FLOOD = 3000;
const RATE = 200;
let gw: TestGateway;
afterEach(() => gw.stop());

describe("a flood of unsigned requests to a route's URL", { timeout: 120_000 }, () => {
  it("records a burst of them and counts the rest: the accepted request before it stays redeliverable", async () => {
    gw = await startTestGateway({
      config: webhookConfig(
        { github: { secret: SECRET, prompt: "Order {order}" } },
        { rate_limit: RATE },
        { agent: recorderAgent() },
      ),
      files: { "agent/recorder.sh": RECORDER_AGENT },
      fakeTimers: true,
    });
    const url = gw.url("/webhooks/github");
    const body = '{"order":7}';
    const signed = { "X-GitHub-Event": "order", "X-Hub-Signature-256": await signGithub(SECRET, body) };
    expect((await postJson(url, body, { ...signed, "X-GitHub-Delivery": "kept-1" })).status).toBe(202);
    await waitForRun(gw, "kept-1");

    // Unsigned: 401 until the route's rate_limit is spent, 429 after.
    const answers = new Map<number, number>();
    let next = 0;
    const sender = async () => {
      while (next < FLOOD) {
        next += 1;
        const { status } = await postJson(url, body, {
          "X-GitHub-Event": "order",
          "X-GitHub-Delivery": `f-${next}`,
        });
        answers.set(status, (answers.get(status) ?? 0) + 1);
      }
    };
    await Promise.all(Array.from({ length: 32 }, sender));
    expect(answers).toEqual(
      new Map([
        [401, RATE - 1],
        [429, FLOOD - RATE + 1],
      ]),
    );

    // The count is written once its period ends.
    gw.clock.advance(NOT_RECORDED_PERIOD_MS);
    await turn();
    const history = readHistory(join(gw.home.dir, "deliveries"));
    const refused = history.filter((r): r is RequestRecord => r.kind === "request" && r.status >= 400);
    const counted = history.filter((r): r is NotRecordedRecord => r.kind === "not_recorded");
    expect(refused).toHaveLength(REFUSED_RECORDS_BURST);
    expect(counted).toHaveLength(1);
    expect(counted[0]).toMatchObject({
      count: FLOOD - REFUSED_RECORDS_BURST,
      answers: [
        { status: 429, outcome: "Rate limit exceeded", count: FLOOD - RATE + 1 },
        {
          status: 401,
          outcome: "Invalid signature",
          reason: expect.stringContaining("no signature"),
          count: RATE - 1 - REFUSED_RECORDS_BURST,
        },
      ],
    });

    const listed = await svc(gw.home, ["webhook", "deliveries", "github", "--limit", "1"]);
    expect(listed.stdout).toContain(
      `${(FLOOD - REFUSED_RECORDS_BURST).toLocaleString("en-US")} more refused requests since`,
    );
    const json = await svc(gw.home, ["webhook", "deliveries", "github", "--limit", "1", "--json"]);
    expect(JSON.parse(json.stdout)).toMatchObject([
      { id: "-", status: null, not_recorded: { count: FLOOD - REFUSED_RECORDS_BURST } },
    ]);

    // The rate window has reopened with the clock: the accepted request is sent again and runs.
    const again = await svc(gw.home, ["webhook", "redeliver", "kept-1", "--port", String(gw.gateway.port)]);
    expect(again).toMatchObject({ code: 0, stdout: expect.stringContaining("202 Accepted") });
    const newId = /as (redelivery-[0-9a-f]{8}-kept-1)\)/.exec(again.stdout)?.[1] as string;
    expect(await waitForRun(gw, newId)).toMatchObject({ prompt: expect.stringContaining("Order 7") });
  });
});
