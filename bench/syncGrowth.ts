/**
 * `node --import tsx bench/syncGrowth.ts [syncs] [batchBytes] [dir]`: what a journal batch's write and
 * `fdatasync` cost on this disk, three ways, one after the other in rounds (pin it: `taskset -c 0`):
 * - `append`: each batch written at the file's end, so each sync also records the file's new size and
 *   its new blocks (how the journal wrote its segments before they were grown ahead);
 * - `grown 1 MiB` and `grown 4 MiB`: the file grown that step of zeros ahead of the batches, again once less
 *   than half a step is left (as `GroupCommitWriter` does), so most syncs write only the batch's pages.
 * Prints, per way, the wall time and the process's CPU (all threads) per sync, and the syncs' p50, p99 and
 * longest. `dir` defaults to the temporary directory (the disk the bench's journals use).
 */
import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const syncs = Number(process.argv[2] ?? 4000);
const batchBytes = Number(process.argv[3] ?? 16 * 1300);
const dir = mkdtempSync(join(process.argv[4] ?? tmpdir(), "svc-sync-growth-"));

function measure(step: number): { wall: number; cpu: number; p50: number; p99: number; max: number } {
  const file = join(dir, `segment-${step}`);
  const fd = openSync(file, "w", 0o600);
  const batch = Buffer.alloc(batchBytes, 0x61);
  const zeros = Buffer.alloc(Math.max(step, 1));
  const waits: number[] = [];
  let end = 0;
  let grownTo = 0;
  const cpuBefore = process.cpuUsage();
  const started = process.hrtime.bigint();
  for (let i = 0; i < syncs; i++) {
    const at = process.hrtime.bigint();
    writeSync(fd, batch, 0, batch.length, end);
    end += batch.length;
    if (step > 0 && grownTo - end < step / 2) {
      const from = Math.max(grownTo, end);
      grownTo = end + step;
      writeSync(fd, zeros, 0, grownTo - from, from);
    }
    fdatasyncSync(fd);
    waits.push(Number(process.hrtime.bigint() - at) / 1000);
  }
  const wall = Number(process.hrtime.bigint() - started) / 1000 / syncs;
  const used = process.cpuUsage(cpuBefore);
  closeSync(fd);
  rmSync(file);
  waits.sort((a, b) => a - b);
  const at = (q: number) => waits[Math.min(waits.length - 1, Math.floor(waits.length * q))] as number;
  return { wall, cpu: (used.user + used.system) / syncs, p50: at(0.5), p99: at(0.99), max: at(1) };
}

const ways: Array<[string, number]> = [
  ["append", 0],
  ["grown 1 MiB", 1024 * 1024],
  ["grown 4 MiB", 4 * 1024 * 1024],
];
try {
  for (let round = 1; round <= 2; round++) {
    for (const [name, step] of ways) {
      const r = measure(step);
      console.log(
        `round ${round} ${name.padEnd(12)} ${r.wall.toFixed(0)} µs wall, ${r.cpu.toFixed(0)} µs CPU per sync; ` +
          `p50 ${r.p50.toFixed(0)} µs, p99 ${r.p99.toFixed(0)} µs, longest ${r.max.toFixed(0)} µs`,
      );
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
