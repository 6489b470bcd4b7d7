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

const OPEN = "INSECURE_NO_AUTH";

/** The body as a sender's JSON library writes it (a Python sender keeps `1.0`; ids past 2^53 stay exact). */
const BODY =
  '{"amount": 1.0, "id": 12345678901234567890, "n": 42, "merged": true, "draft": false, "closed_at": null,' +
  ' "labels": ["bug", "p1"], "user": {"login": "octocat", "score": 9.50}}';

describe("prompt templates over HTTP (spec 2.5): values render as the JSON the sender sent", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      files: { "agent/recorder.sh": RECORDER_AGENT },
      config: webhookConfig(
        {
          scalars: { secret: OPEN, prompt: "{amount}|{id}|{n}|{merged}|{draft}|{closed_at}|{user.score}" },
          nested: { secret: OPEN, prompt: "{labels} {user}" },
          raw: { secret: OPEN, prompt: "#{n}: {__raw__}" },
          dump: { secret: OPEN },
          typed: { secret: OPEN, prompt: "{event_type} on {repo}: {nope}" },
        },
        { rate_limit: 1000 },
        { agent: recorderAgent() },
      ),
    });
  });
  afterAll(() => gw.stop());

  const promptFor = async (route: string) => {
    const res = await postJson(gw.url(`/webhooks/${route}`), BODY);
    expect(res.status).toBe(202);
    return (await waitForRun(gw, res.body.delivery_id as string)).prompt;
  };

  it("numbers exactly as written (1.0, 9.50, ids past 2^53); true, false, null as JSON literals", async () => {
    expect(await promptFor("scalars")).toBe("1.0|12345678901234567890|42|true|false|null|9.50");
  });

  it("a nested dict or list is compact JSON with the sender's numbers", async () => {
    expect(await promptFor("nested")).toBe('["bug","p1"] {"login":"octocat","score":9.50}');
  });

  it("{event_type} names the resolved event type (from the header) when the payload has no such key", async () => {
    const post = async (body: unknown, headers: Record<string, string>) => {
      const res = await postJson(gw.url("/webhooks/typed"), body, headers);
      expect(res.status).toBe(202);
      return (await waitForRun(gw, res.body.delivery_id as string)).prompt;
    };
    expect(await post({ repo: "o/r" }, { "X-GitHub-Event": "push" })).toBe("push on o/r: {nope}");
    expect(await post({ repo: "o/r" }, { "X-Gitlab-Event": "Merge Request Hook" })).toBe(
      "Merge Request Hook on o/r: {nope}",
    );
    // A payload key of that name is the payload's value (rule 1); no event type at all keeps the text.
    expect(await post({ repo: "o/r", event_type: "created" }, {})).toBe("created on o/r: {nope}");
    expect(await post({ repo: "o/r" }, {})).toBe("{event_type} on o/r: {nope}");
  });

  it("{__raw__} and the default dump are indented JSON with the sender's numbers", async () => {
    const indented = JSON.stringify(JSON.parse(BODY), null, 2)
      .replace('"amount": 1,', '"amount": 1.0,')
      .replace(/"id": \d+,/, '"id": 12345678901234567890,')
      .replace('"score": 9.5', '"score": 9.50');
    expect(await promptFor("raw")).toBe(`#42: ${indented}`);
    expect(await promptFor("dump")).toBe(indented);
  });
});
