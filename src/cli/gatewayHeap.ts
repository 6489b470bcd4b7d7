import { setFlagsFromString } from "node:v8";

/** Each major GC lets the old generation grow to at most 1.3× what survived it. */
export const HEAP_GROWING_FLAG = "--heap-growing-percent=30";

/** Whether the command line or NODE_OPTIONS already sets a flag `name` matches (`-` or `_` between words). */
function userSet(execArgv: readonly string[], nodeOptions: string | undefined, name: RegExp): boolean {
  return [...execArgv, ...(nodeOptions ?? "").split(/\s+/)].some((arg) => name.test(arg));
}

/** The flag to set, or undefined when the user chose their own (`node --heap-growing-percent=…`, NODE_OPTIONS). */
export function heapGrowthFlag(
  execArgv: readonly string[],
  nodeOptions: string | undefined,
): string | undefined {
  return userSet(execArgv, nodeOptions, /^--heap[-_]growing[-_]percent(=|$)/) ? undefined : HEAP_GROWING_FLAG;
}

/** The young generation (V8's new space) at its full size from the start: two semi-spaces of 16 MB. */
export const YOUNG_GENERATION_FLAG = "--min-semi-space-size=16";

/**
 * The flag `svc gateway start` adds for the gateway it starts, unless the user sized the young generation
 * (`--min-semi-space-size`, `--max-semi-space-size`, on the command line or in NODE_OPTIONS). Without it, V8
 * starts the young generation small and sizes it as it goes, and half to two thirds of the gateways measured
 * under full load (bench/README.md) went the bad way from their first second: they promoted 2–3× as many
 * objects to the old generation, a major collection followed about once a second, and the accepted path's
 * p99 at 32 connections was 22–35 ms instead of ~10 ms. With it every run went the good way, at ~8 % less
 * CPU per accepted request, for ~13 MB more RSS at rest (under load the young generation is that size anyway).
 * Like the GC threads, it cannot be set once V8 runs.
 */
export function youngGenerationFlags(execArgv: readonly string[], nodeOptions: string | undefined): string[] {
  return userSet(execArgv, nodeOptions, /^--(min|max)[-_]semi[-_]space[-_]size(=|$)/)
    ? []
    : [YOUNG_GENERATION_FLAG];
}

/**
 * Under sustained load V8 lets the gateway's old generation grow to several times what is live before it
 * compacts: measured at ~7k accepted events/s, ~60 MB live after a full GC while RSS climbed 204 → 370 MB
 * over 60 s. A growth step of 30 % keeps RSS near the live set (203 → 214 MB over the same run) for a few
 * more, smaller major GCs (bench/README.md). Set before the gateway allocates; V8 reads it at each GC.
 */
export function boundHeapGrowth(): void {
  const flag = heapGrowthFlag(process.execArgv, process.env.NODE_OPTIONS);
  if (flag !== undefined) setFlagsFromString(flag);
}

/** V8 collects on the main thread only: no marking or scavenging threads. */
export const SINGLE_THREADED_GC_FLAG = "--single-threaded-gc";

/**
 * The flags `svc gateway start` adds for the gateway it starts, given the CPUs this process may run on:
 * with one, V8's concurrent marking and parallel scavenging threads take turns with the event loop on
 * that core, and a busy gateway's syncs wait behind them too. Measured with the gateway pinned to one
 * core (bench/README.md): the accepted path's p99 at 32 connections was 25–31 ms in 4 of 6 rounds
 * without the flag and 9.6–11.2 ms in all 6 with it, at 2 % less CPU per request. Unlike the heap growth
 * step, it cannot be set once V8 runs (V8 aborts), so only a gateway started by svc gets it; none is
 * added when the user set their own GC threading flags.
 */
export function gcThreadFlags(execArgv: readonly string[], cpus: number): string[] {
  if (cpus > 1) return [];
  const chosen = execArgv.some((arg) =>
    /^--(no-)?(single[-_]threaded[-_]gc|concurrent[-_]marking|parallel[-_]scavenge)(=|$)/.test(arg),
  );
  return chosen ? [] : [SINGLE_THREADED_GC_FLAG];
}

/** Every V8 flag `svc gateway start` adds for the gateway it starts, on `cpus` CPUs. */
export function gatewayV8Flags(
  execArgv: readonly string[],
  nodeOptions: string | undefined,
  cpus: number,
): string[] {
  return [...youngGenerationFlags(execArgv, nodeOptions), ...gcThreadFlags(execArgv, cpus)];
}
