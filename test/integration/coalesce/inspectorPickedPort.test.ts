import { describe, expect, it, vi } from "vitest";
import { startInspectRelay } from "../../../src/io/inspectRelay.js";
import { onPickedPort } from "../../helpers/http.js";
import { portTakers, takenPort, takeReleasedPorts } from "../../helpers/takenPorts.js";

/** The inspector's relay takes its port up front: the tests start it on one `onPickedPort` picks. */
describe("a start on a picked port another socket took first", () => {
  const takers = portTakers();

  it("is tried again on another port", async () => {
    takeReleasedPorts(takers, 2);
    const [port, relay] = await onPickedPort((picked) => startInspectRelay(picked));
    vi.restoreAllMocks();
    try {
      expect(takers.map(takenPort)).not.toContain(port);
      expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(200);
    } finally {
      relay.stop();
    }
  });

  it("gives up after five, with the start's own error", async () => {
    takeReleasedPorts(takers, 5);
    await expect(onPickedPort((picked) => startInspectRelay(picked))).rejects.toThrow(/the port is in use/);
    expect(takers).toHaveLength(5);
  });
});
