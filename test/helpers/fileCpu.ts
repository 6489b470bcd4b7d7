// Setup file (vitest.config.ts, only when SVC_TEST_FILE_CPU names a file): appends one line per test file,
// tab-separated: the worker's own CPU and that of the child processes it reaped (clock ticks, /proc/self/stat)
// from the file's start to its end, its wall time in ms, the worker's pid and the file. A child that outlives
// its file counts in the file whose run reaps it.
import { appendFileSync, readFileSync } from "node:fs";
import { afterAll, expect } from "vitest";

function ticks(): { own: number; children: number } {
  const stat = readFileSync("/proc/self/stat", "utf8");
  // The fields after the command's name, which ends at the last ")": utime is the 12th, cstime the 15th.
  const fields = stat
    .slice(stat.lastIndexOf(")") + 2)
    .split(" ")
    .map(Number);
  const at = (i: number) => fields[i] ?? 0;
  return { own: at(11) + at(12), children: at(13) + at(14) };
}

const started = ticks();
const startedAt = Date.now();
afterAll(() => {
  const ended = ticks();
  const out = process.env.SVC_TEST_FILE_CPU;
  if (out === undefined) return;
  appendFileSync(
    out,
    `${ended.own - started.own}\t${ended.children - started.children}\t${Date.now() - startedAt}\t${process.pid}\t${expect.getState().testPath ?? "?"}\n`,
  );
});
