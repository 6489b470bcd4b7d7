import { describe, expect, it } from "vitest";
import { GatewayState } from "../../../src/state/gatewayState.js";
import { memoryStateStore } from "../../../src/state/memoryStore.js";
import type { AcceptedEvent } from "../../../src/streams/context.js";
import { captureLogger } from "../../fakes/logCapture.js";

const event: AcceptedEvent = {
  routeName: "notify",
  route: {} as AcceptedEvent["route"],
  profile: "default",
  event: "push",
  deliveryId: "d-1",
  payload: {},
  headers: {},
  prompt: "p",
  extra: {},
  receivedAt: 0,
};

describe("a direct delivery whose record the journal could not write (disk full)", () => {
  it("is still answered delivered (it was made), and the log says that its retry after a restart would deliver again", async () => {
    const log = captureLogger();
    const recorded: string[] = [];
    const store = {
      ...memoryStateStore(),
      delivered: (key: string) => recorded.push(key),
      durable: () => Promise.reject(new Error("ENOSPC: no space left on device, write")),
    };
    const state = new GatewayState(store, () => 5000, log.logger);
    await expect(state.deliverDirect(async () => true)(event)).resolves.toBe(true);
    expect(recorded).toEqual(["notify:d-1"]);
    expect(log.messages()).toEqual([
      "[state] notify: delivered, but the journal could not record it (answered 200 delivered all the same); it is recorded once the journal can be written again, and a retry of this delivery id after a restart before then would deliver it again",
    ]);
  });

  it("a failed delivery records nothing and says nothing here (its 502 is logged where it failed)", async () => {
    const log = captureLogger();
    const recorded: string[] = [];
    const store = { ...memoryStateStore(), delivered: (key: string) => recorded.push(key) };
    const state = new GatewayState(store, () => 5000, log.logger);
    await expect(state.deliverDirect(async () => false)(event)).resolves.toBe(false);
    expect(recorded).toEqual([]);
    expect(log.messages()).toEqual([]);
  });
});
