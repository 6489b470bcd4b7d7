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

/** The calls log's separators (no argument or body of the tests holds them): after each argument, after the argv, after the call. */
const ARG_END = "\x1f";
const ARGV_END = "\x1e";
const CALL_END = "\x1d";

/** `text` as one single-quoted shell word. */
const quoted = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;

/**
 * Writes an executable `gh` (a small sh script: a node one cost ~0.1 s of CPU per call, and the tests call
 * gh some 40 times) into a temp dir that records its argv and stdin (read only for a comment, which has
 * `--body-file`) in a calls log, then exits with `exitCode` after printing `stderr`.
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
  const log = join(dir, "calls.log");
  const script = `#!/bin/sh
PATH="$PATH:/usr/bin:/bin"
log=${quoted(log)}
comment=
for arg in "$@"; do
  printf '%s\\037' "$arg" >> "$log"
  if [ "$arg" = --body-file ]; then comment=1; fi
done
printf '\\036' >> "$log"
if [ -n "$comment" ]; then cat >> "$log"; fi
printf '\\035' >> "$log"
pr_stderr=${quoted(options.prCommentStderr ?? "")}
if [ -n "$pr_stderr" ] && [ "$1" = pr ]; then
  printf '%s' "$pr_stderr" >&2
  exit 1
fi
stderr=${quoted(options.stderr ?? "")}
if [ -n "$stderr" ]; then printf '%s' "$stderr" >&2; fi
exit ${options.exitCode ?? 0}
`;
  const file = join(dir, "gh");
  writeFileSync(file, script);
  chmodSync(file, 0o755);
  return {
    dir,
    path: `${dir}${delimiter}${process.env.PATH ?? ""}`,
    calls() {
      let text: string;
      try {
        text = readFileSync(log, "utf8");
      } catch {
        return [];
      }
      // Only finished calls: the part after the last CALL_END is a call still writing its argv or stdin.
      return text
        .split(CALL_END)
        .slice(0, -1)
        .map((call) => {
          const end = call.indexOf(ARGV_END);
          return { argv: call.slice(0, end).split(ARG_END).slice(0, -1), stdin: call.slice(end + 1) };
        });
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
