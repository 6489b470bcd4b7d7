import { describe, expect, it } from "vitest";
import {
  gatewayV8Flags,
  gcThreadFlags,
  HEAP_GROWING_FLAG,
  heapGrowthFlag,
  SINGLE_THREADED_GC_FLAG,
  YOUNG_GENERATION_FLAG,
  youngGenerationFlags,
} from "../../../src/cli/gatewayHeap.js";

describe("the gateway's heap growth step", () => {
  it("is set to 30 % unless the user chose one on the command line or in NODE_OPTIONS", () => {
    expect(HEAP_GROWING_FLAG).toBe("--heap-growing-percent=30");
    expect(heapGrowthFlag([], undefined)).toBe(HEAP_GROWING_FLAG);
    expect(heapGrowthFlag(["--max-old-space-size=512"], "--enable-source-maps")).toBe(HEAP_GROWING_FLAG);
    expect(heapGrowthFlag(["--heap-growing-percent=50"], undefined)).toBeUndefined();
    expect(heapGrowthFlag([], "--enable-source-maps --heap_growing_percent=10")).toBeUndefined();
    expect(heapGrowthFlag(["--heap-growing-percent-extra"], undefined)).toBe(HEAP_GROWING_FLAG);
  });
});

describe("the GC threads of a gateway svc starts", () => {
  it("are off (one thread) when the gateway may run on one CPU only, unless the user chose", () => {
    expect(SINGLE_THREADED_GC_FLAG).toBe("--single-threaded-gc");
    expect(gcThreadFlags([], 1)).toEqual([SINGLE_THREADED_GC_FLAG]);
    expect(gcThreadFlags(["--enable-source-maps"], 1)).toEqual([SINGLE_THREADED_GC_FLAG]);
    expect(gcThreadFlags([], 2)).toEqual([]);
    expect(gcThreadFlags([], 16)).toEqual([]);
    for (const chosen of [
      "--single-threaded-gc",
      "--no-single-threaded-gc",
      "--concurrent_marking",
      "--no-parallel-scavenge",
    ])
      expect(gcThreadFlags([chosen], 1)).toEqual([]);
  });
});

describe("the young generation of a gateway svc starts", () => {
  it("is at its full size from the start, unless the user sized it on the command line or in NODE_OPTIONS", () => {
    expect(YOUNG_GENERATION_FLAG).toBe("--min-semi-space-size=16");
    expect(youngGenerationFlags([], undefined)).toEqual([YOUNG_GENERATION_FLAG]);
    expect(youngGenerationFlags(["--max-old-space-size=512"], "--enable-source-maps")).toEqual([
      YOUNG_GENERATION_FLAG,
    ]);
    expect(youngGenerationFlags(["--min-semi-space-size=4"], undefined)).toEqual([]);
    expect(youngGenerationFlags(["--max_semi_space_size=8"], undefined)).toEqual([]);
    expect(youngGenerationFlags([], "--enable-source-maps --max-semi-space-size=8")).toEqual([]);
    expect(youngGenerationFlags(["--semi-space-growth-factor=4"], undefined)).toEqual([
      YOUNG_GENERATION_FLAG,
    ]);
  });

  it("comes with the GC threads' flag where there is one CPU", () => {
    expect(gatewayV8Flags([], undefined, 1)).toEqual([YOUNG_GENERATION_FLAG, SINGLE_THREADED_GC_FLAG]);
    expect(gatewayV8Flags([], undefined, 4)).toEqual([YOUNG_GENERATION_FLAG]);
    expect(gatewayV8Flags(["--single-threaded-gc", "--min-semi-space-size=2"], undefined, 1)).toEqual([]);
  });
});
