import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";

export interface GhCall {
  readonly argv: string[];
  readonly stdin: string;
}

export interface FakeGh {
  readonly dir: string;
  /** PATH with the fake first. */
  readonly path: string;
  calls(): GhCall[];
  cleanup(): void;
}

/**
 * Writes an executable `gh` (a small node script) into a temp dir that records its argv and stdin
 * as JSON lines, then exits with `exitCode` after printing `stderr`.
 */
export function createFakeGh(
  options: {
    exitCode?: number;
    stderr?: string;
    /** Only `gh pr comment` fails, with exit 1 and this stderr (as gh does for an issue's number). */
    prCommentStderr?: string;
  } = {},
): FakeGh {
  const dir = mkdtempSync(join(tmpdir(), "svc-fake-gh-"));
  const log = join(dir, "calls.jsonl");
  const script = `#!${process.execPath}
const fs = require("node:fs");
const chunks = [];
const isComment = process.argv.includes("--body-file");
function finish() {
  fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify({ argv: process.argv.slice(2), stdin: Buffer.concat(chunks).toString("utf8") }) + "\\n");
  if (${JSON.stringify(options.prCommentStderr ?? "")} && process.argv[2] === "pr") {
    process.stderr.write(${JSON.stringify(options.prCommentStderr ?? "")});
    process.exit(1);
  }
  if (${JSON.stringify(options.stderr ?? "")}) process.stderr.write(${JSON.stringify(options.stderr ?? "")});
  process.exit(${options.exitCode ?? 0});
}
if (isComment) { process.stdin.on("data", (c) => chunks.push(c)); process.stdin.on("end", finish); } else finish();
`;
  const file = join(dir, "gh");
  writeFileSync(file, script);
  chmodSync(file, 0o755);
  return {
    dir,
    path: `${dir}${delimiter}${process.env.PATH ?? ""}`,
    calls() {
      try {
        return readFileSync(log, "utf8")
          .split("\n")
          .filter((line) => line !== "")
          .map((line) => JSON.parse(line) as GhCall);
      } catch {
        return [];
      }
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
