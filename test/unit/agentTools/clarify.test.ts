import { describe, expect, it } from "vitest";
import { clarifyTool, NO_ONE_PRESENT } from "../../../src/agent/tools/clarify.js";
import { outcomeText, toolContext } from "../../helpers/toolContext.js";

describe("clarify", () => {
  it("in a webhook or cron run, answers that no one is present and the agent should proceed", async () => {
    const outcome = await clarifyTool().execute(
      { question: "Which branch?" },
      toolContext({ unattended: true }),
    );
    expect(outcomeText(outcome)).toBe(NO_ONE_PRESENT);
    expect(NO_ONE_PRESENT).toMatch(/No one is present.*best judgement.*say in your reply what you need/);
  });

  it("asks for a question", async () => {
    expect(await clarifyTool().execute({}, toolContext())).toMatchObject({ ok: false });
  });
});
