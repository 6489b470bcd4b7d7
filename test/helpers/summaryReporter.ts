import type { Reporter, TestModule } from "vitest/node";

type RunEnd = NonNullable<Reporter["onTestRunEnd"]>;

/**
 * Prints the plain closing line `N passed, N failed, N skipped` that CI reads. A file that failed outside
 * its tests (at import, or in a beforeAll/afterAll hook) counts as one failure when none of its tests
 * failed, and so does each error vitest caught outside any test.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(...[testModules, unhandledErrors]: Parameters<RunEnd>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const mod of testModules) {
      let failedHere = 0;
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") passed++;
        else if (state === "failed") failedHere++;
        else skipped++;
      }
      if (mod.state() === "failed" && failedHere === 0) failedHere = 1;
      failed += failedHere;
    }
    failed += unhandledErrors.length;
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
