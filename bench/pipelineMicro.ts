/**
 * The request stream alone, in one process: `node --import tsx bench/pipelineMicro.ts [iterations]`.
 * Submits N signed requests (unique delivery ids) on a synchronous static route of the real route
 * registry (in-memory limiter and seen cache, agent runs queued synchronously, no script, no direct
 * delivery), admitted on the headers then pushed with the body as the ingress does, and prints the
 * best of five rounds. Runs on a pipeline with `admit` or, for a before/after, one with only `preflight`.
 */
import { join } from "node:path";
import type { Outcome } from "../src/streams/types.js";
import { inbound, pipelineAt, sender } from "./pipelineUnderTest.js";

const iterations = Number(process.argv[2] ?? 200_000);
let queued = 0;
let answered = 0;
let accepted = 0;
const reply = (outcome: Outcome) => {
  answered += 1;
  if (outcome.status === 202) accepted += 1;
};
const pipeline = await pipelineAt(join(import.meta.dirname, ".."), () => {
  queued += 1;
});
const send = sender(pipeline, reply);

/** One round: wall seconds, and this process's CPU seconds (less disturbed by a loaded machine). */
function round(n: number): { wall: number; cpu: number } {
  const cpuBefore = process.cpuUsage();
  const started = process.hrtime.bigint();
  for (let i = 0; i < n; i++) send(inbound());
  const wall = Number(process.hrtime.bigint() - started) / 1e9;
  const cpu = process.cpuUsage(cpuBefore);
  return { wall, cpu: (cpu.user + cpu.system) / 1e6 };
}

round(20_000); // warm-up
let best = Number.POSITIVE_INFINITY;
let bestCpu = Number.POSITIVE_INFINITY;
for (let r = 0; r < 5; r++) {
  const { wall, cpu } = round(iterations);
  best = Math.min(best, wall);
  bestCpu = Math.min(bestCpu, cpu);
}
const expected = 20_000 + 5 * iterations;
if (answered !== expected || accepted !== expected || queued !== expected) {
  throw new Error(`answered ${answered}, accepted ${accepted}, queued ${queued}; expected ${expected}`);
}
const perRequest = (seconds: number) => ((seconds / iterations) * 1e6).toFixed(2);
console.log(
  `pipeline: ${iterations} requests in ${best.toFixed(3)} s (best of 5), ${Math.round(iterations / best)} req/s, ${perRequest(best)} µs/request wall, ${perRequest(bestCpu)} µs/request CPU`,
);
await pipeline.close();
