/**
 * Preload (`node --import ./bench/allocationSampler.mjs`) for `bench/allocations.ts`: the first SIGUSR2
 * starts V8's sampling heap profiler, counting objects the garbage collector has already freed too (what
 * a request allocates, not what it keeps; with ALLOC_LIVE=1 only what is still alive at the end: what it
 * keeps; with ALLOC_PROMOTED=1 what outlived the young generation: kept, or freed only by a major collection);
 * the second stops it and writes the profile to $ALLOC_PROFILE_OUT.
 */
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector";

const session = new Session();
session.connect();
session.post("HeapProfiler.enable");
let sampling = false;
process.on("SIGUSR2", () => {
  if (!sampling) {
    sampling = true;
    session.post("HeapProfiler.startSampling", {
      samplingInterval: 2048,
      includeObjectsCollectedByMajorGC: process.env.ALLOC_LIVE !== "1",
      // ALLOC_PROMOTED=1: what outlived the young generation (kept, or freed only by a major collection).
      includeObjectsCollectedByMinorGC: process.env.ALLOC_LIVE !== "1" && process.env.ALLOC_PROMOTED !== "1",
    });
    return;
  }
  session.post("HeapProfiler.stopSampling", (err, result) => {
    writeFileSync(process.env.ALLOC_PROFILE_OUT, JSON.stringify(err ? { error: String(err) } : result.profile));
  });
});
