import { afterEach, describe, expect, it } from "vitest";
import { readPendingRuns } from "../../../src/io/stores/pendingRuns.js";
import { readSeenIds } from "../../../src/io/stores/seenIds.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome | undefined;
afterEach(() => home?.cleanup());

const zeros = (n: number) =>
  `holds only zero bytes (${n} bytes): its data never reached the disk (a power cut or a crash as it was written)`;

/** What a power cut leaves of a file whose size reached the disk before its data: named so, not as another shape. */
describe("a saved-state file of zero bytes only", () => {
  it("webhook-pending-runs.json is named so, not as a file of another shape", () => {
    home = tempHome();
    const path = home.write("webhook-pending-runs.json", "\0".repeat(200));
    expect(() => readPendingRuns(path)).toThrow(`${path}: ${zeros(200)}`);
  });

  it("webhook-seen-ids.json is named so, not as a file that is not JSON", () => {
    home = tempHome();
    const path = home.write("webhook-seen-ids.json", "\0".repeat(64));
    expect(() => readSeenIds(path)).toThrow(`${path}: ${zeros(64)}`);
  });
});
