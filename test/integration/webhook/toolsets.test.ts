import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  RECORDER_AGENT,
  recorderAgent,
  startTestGateway,
  type TestGateway,
  waitForRun,
  webhookConfig,
} from "../../helpers/gateway.js";
import { githubExample } from "../../helpers/githubExamples.js";
import { postJson } from "../../helpers/http.js";

const OPEN = "INSECURE_NO_AUTH";

/** Spec 2.2 `toolsets` and spec 5 rule 5, as the `command` agent sees them (SVC_TOOLSETS). */
describe("the toolsets a run receives", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      files: { "agent/recorder.sh": RECORDER_AGENT },
      config: webhookConfig(
        {
          plain: { secret: OPEN, events: ["issues"] },
          terminal: { secret: OPEN, toolsets: ["terminal", "file", "code_execution", "web"] },
          back: { secret: OPEN, toolsets: ["svc-webhook", "terminal", "made_up"] },
        },
        { rate_limit: 1000 },
        { agent: recorderAgent() },
      ),
    });
  });
  afterAll(() => gw.stop());

  const run = async (route: string, id: string) => {
    const res = await postJson(gw.url(`/webhooks/${route}`), githubExample("issues", "opened"), {
      "X-GitHub-Event": "issues",
      "X-GitHub-Delivery": id,
    });
    expect(res.status).toBe(202);
    return waitForRun(gw, id);
  };

  it("without toolsets a run gets the svc-webhook default: web_search, web_extract, vision_analyze, clarify (no terminal)", async () => {
    const recorded = await run("plain", "ts-1");
    expect(recorded.toolsets?.split(",")).toEqual(["web_search", "web_extract", "vision_analyze", "clarify"]);
  });

  it("a route's toolsets replace the default instead of merging with it", async () => {
    const recorded = await run("terminal", "ts-2");
    expect(recorded.toolsets?.split(",")).toEqual(["terminal", "file", "code_execution", "web"]);
  });

  it("svc-webhook in the list brings the default back; unknown names are dropped", async () => {
    const recorded = await run("back", "ts-3");
    expect(recorded.toolsets?.split(",")).toEqual([
      "web_search",
      "web_extract",
      "vision_analyze",
      "clarify",
      "terminal",
    ]);
  });
});
