import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The committed seconds each test file took in a whole run: `node scripts/testDurations.mjs` writes them
 * from the runner's own record of the last run.
 */
export const DURATIONS_FILE = "test/fileDurations.json";

function committedDurations(root: string): Readonly<Record<string, number>> {
  try {
    return JSON.parse(readFileSync(join(root, DURATIONS_FILE), "utf8")) as Record<string, number>;
  } catch {
    return {};
  }
}

/**
 * Longest file first, as vitest orders files it has timed (its record of the last run, under
 * node_modules/.vite). A fresh clone has no such record, and vitest then starts the largest files first:
 * small files that wait on child processes (the real MCP servers' tests) started last and ran on alone
 * while the other workers had nothing left. Files neither record knows run first, as vitest runs them;
 * files that failed last time still go before the rest.
 */
export default class DurationSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const committed = committedDurations(root);
    const cache = this.ctx.cache;
    const timed = files.map((spec) => {
      const path = relative(root, spec.moduleId);
      const last = cache.getFileTestResults(`${spec.project.name}:${path}`);
      const seconds = committed[path];
      return {
        spec,
        failed: last?.failed === true,
        ms: last?.duration ?? (seconds === undefined ? undefined : seconds * 1000),
      };
    });
    const rank = (t: (typeof timed)[number]) => (t.failed ? 0 : t.ms === undefined ? 1 : 2);
    return timed.sort((a, b) => rank(a) - rank(b) || (b.ms ?? 0) - (a.ms ?? 0)).map((t) => t.spec);
  }
}
