import type { Logger } from "../io/log.js";
import { unreadSubscriptionFileWarning } from "../io/stores/unreadSubscriptionFile.js";
import type { DynamicRoutes } from "./dynamicRoutes.js";

/**
 * With `state.backend: redis`, at start and at each reload: the subscriptions webhook_subscriptions.json
 * holds that Redis does not, which no gateway serves (the file is not read with redis), named at WARN. A
 * Redis that does not answer now says nothing here (its source logs the outage).
 */
export async function sayUnreadSubscriptionFile(
  dynamic: Pick<DynamicRoutes, "storedNames">,
  file: string,
  logger: Logger,
): Promise<void> {
  const stored = await dynamic.storedNames().catch(() => undefined);
  if (stored === undefined) return;
  const warning = unreadSubscriptionFileWarning(file, stored.names, stored.where);
  if (warning !== undefined) logger.warn(`[webhook] ${warning}`);
}
