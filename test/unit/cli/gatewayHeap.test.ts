import { describe, expect, it } from "vitest";
import { HEAP_GROWING_FLAG, heapGrowthFlag } from "../../../src/cli/gatewayHeap.js";

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
