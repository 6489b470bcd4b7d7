import { closeSync, openSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { writeBytesSync } from "../../../src/io/batchedWriter.js";
import { createHistoryWriter, readHistory } from "../../../src/io/stores/deliveryHistory.js";
import { tempHome } from "../../helpers/home.js";

const T0 = Date.parse("2026-11-20T10:00:00Z");
const turn = () => new Promise((resolve) => setImmediate(resolve));
const run = (id: string) =>
  ({ kind: "run", id, at: new Date(T0).toISOString(), route: "pr", outcome: "ok" }) as const;

let cleanup: () => void = () => {};
afterEach(() => cleanup());

describe("delivery history on a full disk", () => {
  it("reports a failing write once per outage, not once per event-loop turn, and writes again once there is room", async () => {
    const home = tempHome();
    // The disk is full for the next `full` batches: they go to /dev/full, which answers ENOSPC.
    const devFull = openSync("/dev/full", "w");
    cleanup = () => {
      closeSync(devFull);
      home.cleanup();
    };
    let full = 0;
    const dir = join(home.dir, "deliveries");
    const errors: unknown[] = [];
    const writer = createHistoryWriter(
      dir,
      (err) => errors.push(err),
      () => T0,
      undefined,
      (fd, bytes) => (full-- > 0 ? writeBytesSync(devFull, bytes) : writeBytesSync(fd, bytes)),
    );
    full = 3;
    for (const id of ["a", "b", "c"]) {
      writer.record(run(id));
      await turn();
    }
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: "ENOSPC" });
    writer.record(run("d"));
    await turn();
    full = 1;
    writer.record(run("e"));
    await turn();
    writer.close();
    // A second outage is reported again; the batches of the full disk are lost, the others kept.
    expect(errors).toHaveLength(2);
    expect(readHistory(dir, T0).map((r) => r.id)).toEqual(["d"]);
  });
});
