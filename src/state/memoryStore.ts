import { NOTHING_RECOVERED, type StateStore } from "./store.js";

/** Today's behaviour: everything in memory, nothing kept across a crash (tests and benchmarks). */
export function memoryStateStore(): StateStore {
  return {
    backend: "memory",
    recover: () => NOTHING_RECOVERED,
    runAccepted() {},
    runFinished() {},
    runRefused() {},
    remember() {},
    delivered() {},
    groupUpdated() {},
    groupFired() {},
    durable: () => undefined,
    close: () => Promise.resolve(),
  };
}
