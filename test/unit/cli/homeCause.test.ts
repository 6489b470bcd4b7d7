import { describe, expect, it } from "vitest";
import { homeCause } from "../../../src/cli/homeCause.js";
import { SvcError } from "../../../src/errors.js";
import { homeProblem } from "../../../src/io/homeWritable.js";
import { tempHome } from "../../helpers/home.js";

describe("homeCause: a failure caused by SVC_HOME itself", () => {
  it("is said once when the failure is the gateway's own refusal of SVC_HOME (svc gateway run|start)", () => {
    const parent = tempHome();
    try {
      // A path under a file: stat fails with ENOTDIR, and the file on the way is named.
      const home = `${parent.write("file", "x")}/sub`;
      const problem = homeProblem(home) as string;
      expect(problem).toContain("on the way to it, is a file, not a directory");
      expect(homeCause(new SvcError("startup_refused", problem), () => home)).toBeUndefined();
    } finally {
      parent.cleanup();
    }
  });

  it("another file's failure gets SVC_HOME's problem first, the failure after it in brackets", () => {
    const parent = tempHome();
    try {
      const home = `${parent.write("file", "x")}/sub`;
      const failure = new Error(`ENOTDIR: not a directory, open '${home}/.env.lock'`);
      expect(homeCause(failure, () => home)).toBe(`${homeProblem(home)} (${failure.message})`);
    } finally {
      parent.cleanup();
    }
  });
});
