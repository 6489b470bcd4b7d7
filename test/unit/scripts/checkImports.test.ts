import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { importProblems } from "../../../scripts/checkImports.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

const SCRIPT = join(import.meta.dirname, "../../../scripts/checkImports.ts");

function withTree<T>(files: Record<string, string>, use: (dir: string) => T): T {
  const dir: TempHome = tempHome();
  try {
    for (const [path, text] of Object.entries(files)) dir.write(path, text);
    return use(dir.dir);
  } finally {
    dir.cleanup();
  }
}

/** Runs the script as `npm run check:imports` does: its exit code and what it printed. */
function run(files: Record<string, string>): { code: number; output: string } {
  return withTree(files, (dir) => {
    try {
      const output = execFileSync(process.execPath, ["--import", "tsx", SCRIPT, dir], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
      });
      return { code: 0, output };
    } catch (err) {
      const failed = err as { status: number; stderr: string };
      return { code: failed.status, output: failed.stderr };
    }
  });
}

const problems = (files: Record<string, string>): string[] =>
  withTree(files, (dir) => importProblems(dir).problems);

describe("scripts/checkImports.ts (run by npm test)", () => {
  it("passes a tree without cycles that keeps the layer rules", () => {
    const found = problems({
      "io/a.ts": 'import { b } from "../streams/b.js";\nexport const a = b;\n',
      "streams/b.ts": "export const b = 1;\n",
    });
    expect(found).toEqual([]);
  });

  it("exits 1 on a cycle, type-only imports included, and names its files", () => {
    const result = run({
      "actors/a.ts": 'import type { B } from "./b.js";\nexport type A = B;\n',
      "actors/b.ts": 'import { a } from "./c.js";\nexport type B = typeof a;\n',
      "actors/c.ts": 'export type { A } from "./a.js";\nexport const a = 1;\n',
    });
    expect(result.code).toBe(1);
    expect(result.output).toContain("cycle: actors/a.ts ↔ actors/b.ts ↔ actors/c.ts");
  });

  it("fails when streams/ imports io/ or io/ imports cli/ (dynamic import included)", () => {
    const found = problems({
      "streams/s.ts": 'import { x } from "../io/x.js";\nexport const s = x;\n',
      "io/x.ts": 'export const x = 1;\nexport const later = () => import("../cli/c.js");\n',
      "cli/c.ts": "export const c = 1;\n",
    });
    expect(found).toContain("layer: streams/s.ts imports io/x.ts (streams/ must not import io/)");
    expect(found).toContain("layer: io/x.ts imports cli/c.ts (io/ must not import cli/)");
  });

  it("fails when state/ imports gateway/ (ARCHITECTURE.md: the state backends sit below the composition root)", () => {
    const found = problems({
      "state/s.ts": 'import { g } from "../gateway/g.js";\nexport const s = g;\n',
      "gateway/g.ts": "export const g = 1;\n",
    });
    expect(found).toContain("layer: state/s.ts imports gateway/g.ts (state/ must not import gateway/)");
  });
});
