import type { InspectionEvent } from "xstate";
import {
  type CoalesceObserver,
  type Coalescer,
  coalescerActor,
  createCoalescer,
  type TimerClock,
  withCoalesceNote,
} from "../actors/coalescer.js";
import type { GatewaySystem } from "../actors/system.js";
import type { Logger } from "../io/log.js";
import type { AcceptedEvent } from "../streams/context.js";

export interface CoalescingDeps {
  readonly system: GatewaySystem;
  readonly logger: Logger;
  readonly timers: TimerClock;
  /** Under `--inspect` the groups are actors under the `coalescer` actor, visible in the inspector. */
  readonly inspect?: (event: InspectionEvent) => void;
  /** Where a fired group's run goes (past the queue's cap: its events were answered 202 long ago). */
  readonly dispatch: (event: AcceptedEvent) => void;
  /** Told of every group change (the state journal keeps pending groups across a crash). */
  readonly observer?: CoalesceObserver;
  /** Pending groups at most (default `COALESCE_GROUP_CAP`). */
  readonly maxGroups?: number;
  /** The clock that is never set (`Clock.elapsed`). */
  readonly elapsed: () => number;
}

export interface Coalescing {
  readonly coalescer: Coalescer;
  /** Fires every pending group now (stop, reload), through the `coalescer` actor's `flush` event. */
  flush(): void;
}

/** Coalescing groups per (route, rendered key) and the `coalescer` actor that owns them. */
export function createCoalescing(deps: CoalescingDeps): Coalescing {
  const coalescer = createCoalescer({
    logger: deps.logger,
    dispatch: (event, superseded) => deps.dispatch(withCoalesceNote(event, superseded)),
    clock: deps.timers,
    elapsed: deps.elapsed,
    ...(deps.observer === undefined ? {} : { observer: deps.observer }),
    ...(deps.maxGroups === undefined ? {} : { maxGroups: deps.maxGroups }),
    ...(deps.inspect === undefined ? {} : { parent: () => ref }),
  });
  const ref = deps.system.spawn("coalescer", coalescerActor(coalescer));
  return {
    coalescer,
    flush: () => ref.send({ type: "flush" }),
  };
}
