import { createProfileResources } from "../../src/gateway/profileResources.js";
import type { Logger } from "../../src/io/log.js";

const turn = () => new Promise((resolve) => setImmediate(resolve));

/**
 * `profile`'s run sessions in `home` recorded, one run a delivery id (more than one: a turn of the event loop after
 * each, so that each is written on its own), then the journals closed; what the writer warned.
 */
export async function sessionWarnings(
  home: string,
  profile = "default",
  deliveries = ["d-1"],
): Promise<unknown[][]> {
  const warnings: unknown[][] = [];
  const logger = { warn: (...args: unknown[]) => warnings.push(args) } as unknown as Logger;
  const resources = createProfileResources(home, logger, Date.now);
  for (const deliveryId of deliveries) {
    resources.runJournal(profile).record({ route: "r", deliveryId, prompt: "p", reply: "done" });
    if (deliveries.length > 1) await turn();
  }
  await resources.closeJournals();
  return warnings;
}
