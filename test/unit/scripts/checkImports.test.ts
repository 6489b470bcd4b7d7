import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";

const SCRIPT = join(import.meta.dirname, "../../../scripts/checkImports.ts");

function check(files: Record<string, string>): { code: number; output: string } {
  const dir: TempHome = tempHome();
  try {
    for (const [path, text] of Object.entries(files)) dir.write(path, text);
    try {
      const output = execFileSync(process.execPath, ["--import", "tsx", SCRIPT, dir.dir], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
      });
      return { code: 0, output };
    } catch (err) {
      const failed = err as { status: number; stderr: string };
      return { code: failed.status, output: failed.stderr };
    }
  } finally {
    dir.cleanup();
  }
}

describe("scripts/checkImports.ts (run by npm test)", () => {
  it("passes a tree without cycles that keeps the layer rules", () => {
    const result = check({
      "io/a.ts": 'import { b } from "../streams/b.js";\nexport const a = b;\n',
      "streams/b.ts": "export const b = 1;\n",
    });
    expect(result.code).toBe(0);
  });

  it("fails on a cycle, type-only imports included, and names its files", () => {
    const result = check({
      "actors/a.ts": 'import type { B } from "./b.js";\nexport type A = B;\n',
      "actors/b.ts": 'import { a } from "./c.js";\nexport type B = typeof a;\n',
      "actors/c.ts": 'export type { A } from "./a.js";\nexport const a = 1;\n',
    });
    expect(result.code).toBe(1);
    expect(result.output).toContain("cycle: actors/a.ts ↔ actors/b.ts ↔ actors/c.ts");
  });

  it("fails when streams/ imports io/ or io/ imports cli/ (dynamic import included)", () => {
    const result = check({
      "streams/s.ts": 'import { x } from "../io/x.js";\nexport const s = x;\n',
      "io/x.ts": 'export const x = 1;\nexport const later = () => import("../cli/c.js");\n',
      "cli/c.ts": "export const c = 1;\n",
    });
    expect(result.code).toBe(1);
    expect(result.output).toContain("layer: streams/s.ts imports io/x.ts");
    expect(result.output).toContain("layer: io/x.ts imports cli/c.ts");
  });
});
