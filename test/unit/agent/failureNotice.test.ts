import { describe, expect, it } from "vitest";
import { failureNotice } from "../../../src/actors/agent/failureNotice.js";
import { AgentRunFailure } from "../../../src/actors/agent/runner.js";
import type { RunRecord } from "../../../src/agent/runRecord.js";

const record: RunRecord = {
  provider: "openai",
  model: "m",
  steps: 0,
  toolCalls: [],
  usage: { input: 0, output: 0 },
  outcome: "error",
  ms: 5,
};
const failure = new AgentRunFailure(
  "model endpoint http://10.0.0.5:11434/v1/chat/completions could not be reached",
  record,
);

describe("the notice a failed model run delivers", () => {
  it("a chat target gets the reason", () => {
    expect(failureNotice(failure, "telegram", "d-1")?.text).toBe(
      "⚠️ Agent run failed: model endpoint http://10.0.0.5:11434/v1/chat/completions could not be reached",
    );
  });

  it("a code-host comment, under either of its names, gets where the reason is: the log, under the delivery ID", () => {
    for (const target of ["forge_comment", "github_comment"]) {
      const notice = failureNotice(failure, target, "d-1");
      expect(notice?.text).toBe("⚠️ Agent run failed — the gateway's log says why (delivery d-1)");
      expect(notice?.record).toBe(record);
    }
  });

  it("any other error gives no notice (the run fails as before)", () => {
    expect(failureNotice(new Error("exited 1"), "forge_comment", "d-1")).toBeUndefined();
  });
});
