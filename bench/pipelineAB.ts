/**
 * Two checkouts' request streams in one process, rounds interleaved so the load of a shared machine
 * falls on both alike: `node --import tsx bench/pipelineAB.ts <rootA> <rootB> [rounds] [perRound]`
 * (a root holds `src/`, e.g. `git archive main src package.json tsconfig.json | tar -x -C /tmp/main`
 * with a `node_modules` link). The workload is pipelineMicro's: signed requests with unique delivery
 * ids on a static route of the real registry, admitted on the headers (`admit`, or `preflight` where
 * there is none) then pushed. Prints min and median µs per request of each side.
 */
import type { Outcome } from "../src/streams/types.js";
import { inbound, pipelineAt, sender } from "./pipelineUnderTest.js";

let unexpected = 0;
const reply = (outcome: Outcome) => {
  if (outcome.status !== 202) unexpected += 1;
};

const [rootA, rootB] = [process.argv[2], process.argv[3]];
if (rootA === undefined || rootB === undefined) throw new Error("usage: pipelineAB.ts <rootA> <rootB>");
const rounds = Number(process.argv[4] ?? 20);
const perRound = Number(process.argv[5] ?? 15_000);
const a = sender(await pipelineAt(rootA), reply);
const b = sender(await pipelineAt(rootB), reply);
const round = (send: ReturnType<typeof sender>, n: number) => {
  const started = process.hrtime.bigint();
  for (let i = 0; i < n; i++) send(inbound());
  return Number(process.hrtime.bigint() - started) / 1e3 / n;
};
round(a, 20_000);
round(b, 20_000);
const timesA: number[] = [];
const timesB: number[] = [];
for (let i = 0; i < rounds; i++) {
  // Alternate which side goes first, so neither always runs right after the other's garbage.
  if (i % 2 === 0) {
    timesA.push(round(a, perRound));
    timesB.push(round(b, perRound));
  } else {
    timesB.push(round(b, perRound));
    timesA.push(round(a, perRound));
  }
}
if (unexpected > 0) throw new Error(`${unexpected} requests were not answered 202`);
const median = (xs: number[]) => ([...xs].sort((x, y) => x - y)[xs.length >> 1] ?? 0).toFixed(2);
const min = (xs: number[]) => Math.min(...xs).toFixed(2);
console.log(`A ${rootA}: min ${min(timesA)} median ${median(timesA)} µs/request`);
console.log(`B ${rootB}: min ${min(timesB)} median ${median(timesB)} µs/request`);
