import { afterEach, describe, expect, it, vi } from "vitest";
import type { TestModule } from "vitest/node";
import SummaryReporter from "../../helpers/summaryReporter.js";

/** A test file as the reporter sees it: its own state and its tests' states. */
function file(state: "passed" | "failed", tests: readonly string[]): TestModule {
  const all = tests.map((s) => ({ result: () => ({ state: s }) }));
  return {
    state: () => state,
    children: { allTests: () => all[Symbol.iterator]() },
  } as unknown as TestModule;
}

function summary(modules: readonly TestModule[], unhandled: readonly unknown[] = []): string {
  let out = "";
  const write = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
    out += String(chunk);
    return true;
  });
  try {
    new SummaryReporter().onTestRunEnd(modules, unhandled as never, "passed");
  } finally {
    write.mockRestore();
  }
  return out.trim();
}

afterEach(() => vi.restoreAllMocks());

describe("the suite's closing line", () => {
  it("counts each test by its state", () => {
    expect(summary([file("failed", ["passed", "failed", "skipped"]), file("passed", ["passed"])])).toBe(
      "2 passed, 1 failed, 1 skipped",
    );
  });

  it("counts a file that failed in a hook while all its tests passed as one failure", () => {
    expect(summary([file("failed", ["passed", "passed"])])).toBe("2 passed, 1 failed, 0 skipped");
  });

  it("counts a file that failed before any test ran, and each error caught outside the tests", () => {
    expect(summary([file("failed", [])], [new Error("a"), new Error("b")])).toBe(
      "0 passed, 3 failed, 0 skipped",
    );
  });
});
