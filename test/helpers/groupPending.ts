import { stateDir } from "../../src/state/gatewayState.js";
import { LocalStateStore } from "../../src/state/localStore.js";
import type { TempHome } from "./home.js";

/** What a gateway killed with a group of route `grouped` pending (key 1, two events, the latest `saved`) left. */
export async function killedWithGroupPending(home: TempHome, t0: number): Promise<void> {
  const store = new LocalStateStore({ dir: stateDir(home.dir), now: () => t0 });
  store.groupUpdated({
    id: "grouped\u00001",
    latest: {
      profile: "default",
      routeName: "grouped",
      event: undefined,
      deliveryId: "saved",
      prompt: "prompt saved",
      extra: {},
      receivedAt: t0 - 5_000,
    },
    merged: 2,
    firstAt: t0 - 10_000,
    lastAt: t0 - 5_000,
  });
  await store.durable();
  await store.close();
}
