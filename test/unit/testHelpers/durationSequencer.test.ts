import { join } from "node:path";
import { expect, it } from "vitest";
import type { TestSpecification, Vitest } from "vitest/node";
import DurationSequencer from "../../helpers/durationSequencer.js";
import { tempHome } from "../../helpers/home.js";

it("orders failed files first, then files no record knows, then the longest first: this clone's record over the committed durations", async () => {
  const root = tempHome();
  try {
    root.write(
      "test/fileDurations.json",
      JSON.stringify({ "test/a.test.ts": 1, "test/b.test.ts": 20, "test/c.test.ts": 5, "test/d.test.ts": 2 }),
    );
    // This clone's own record: c took 30 s in its last run (the committed 5 s is older), d failed.
    const record: Record<string, { duration: number; failed: boolean }> = {
      ":test/c.test.ts": { duration: 30_000, failed: false },
      ":test/d.test.ts": { duration: 100, failed: true },
    };
    const ctx = {
      config: { root: root.dir },
      cache: { getFileTestResults: (key: string) => record[key] },
    } as unknown as Vitest;
    const spec = (name: string) =>
      ({ moduleId: join(root.dir, "test", name), project: { name: "" } }) as unknown as TestSpecification;
    const files = ["a.test.ts", "b.test.ts", "c.test.ts", "d.test.ts", "new.test.ts"].map(spec);
    const sorted = await new DurationSequencer(ctx).sort(files);
    expect(sorted.map((s) => s.moduleId.slice(join(root.dir, "test").length + 1))).toEqual([
      "d.test.ts",
      "new.test.ts",
      "c.test.ts",
      "b.test.ts",
      "a.test.ts",
    ]);
  } finally {
    root.cleanup();
  }
});
