import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { tempHome } from "../../helpers/home.js";

// The disk is full for the first `full.writes` writes (ENOSPC), then has room again.
const full = vi.hoisted(() => ({ writes: 0 }));
vi.mock("../../../src/io/batchedWriter.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../../src/io/batchedWriter.js")>();
  return {
    ...actual,
    writeBytesSync: (fd: number, bytes: Uint8Array) => {
      if (full.writes > 0) {
        full.writes -= 1;
        throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
      }
      return actual.writeBytesSync(fd, bytes);
    },
  };
});

const { createHistoryWriter, readHistory } = await import("../../../src/io/stores/deliveryHistory.js");

const T0 = Date.parse("2026-11-20T10:00:00Z");
const turn = () => new Promise((resolve) => setImmediate(resolve));
const run = (id: string) =>
  ({ kind: "run", id, at: new Date(T0).toISOString(), route: "pr", outcome: "ok" }) as const;

let cleanup: () => void = () => {};
afterEach(() => cleanup());

describe("delivery history on a full disk", () => {
  it("reports a failing write once per outage, not once per event-loop turn, and writes again once there is room", async () => {
    const home = tempHome();
    cleanup = home.cleanup;
    const dir = join(home.dir, "deliveries");
    const errors: unknown[] = [];
    const writer = createHistoryWriter(
      dir,
      (err) => errors.push(err),
      () => T0,
    );
    full.writes = 3;
    for (const id of ["a", "b", "c"]) {
      writer.record(run(id));
      await turn();
    }
    expect(errors).toHaveLength(1);
    writer.record(run("d"));
    await turn();
    full.writes = 1;
    writer.record(run("e"));
    await turn();
    writer.close();
    // A second outage is reported again; the batches of the full disk are lost, the others kept.
    expect(errors).toHaveLength(2);
    expect(readHistory(dir, T0).map((r) => r.id)).toEqual(["d"]);
  });
});
