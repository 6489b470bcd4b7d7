import type { PendingRun } from "../../src/io/stores/pendingRuns.js";

/** A saved agent run of route `pr` (push, prompt "p"), as webhook-pending-runs.json and the journal hold one. */
export const pendingRun = (deliveryId: string, fields: Partial<PendingRun> = {}): PendingRun => ({
  profile: "default",
  routeName: "pr",
  event: "push",
  deliveryId,
  prompt: "p",
  extra: {},
  receivedAt: 1000,
  ...fields,
});
