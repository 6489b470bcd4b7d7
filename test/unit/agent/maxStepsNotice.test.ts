import { describe, expect, it } from "vitest";
import { maxStepsNotice } from "../../../src/agent/modelRunner.js";

describe("the reply of a run that ran out of model turns", () => {
  it("counts one turn in the singular and more in the plural, and names the setting", () => {
    expect(maxStepsNotice(1)).toBe(
      "(stopped after 1 model turn without a final answer — raise agent.max_steps)",
    );
    expect(maxStepsNotice(3)).toBe(
      "(stopped after 3 model turns without a final answer — raise agent.max_steps)",
    );
  });
});
