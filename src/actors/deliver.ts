import type { SvcPaths } from "../config/paths.js";
import type { Logger } from "../io/log.js";
import type { TargetRegistry } from "../io/targets/registry.js";
import { DeliveryError, type DeliveryMessage, type DeliveryReceipt } from "../io/targets/target.js";

/** How a reply reaches its route's target. `agent` mode retries transient failures; `direct` does not. */
export interface DeliveryRequest {
  readonly target: string;
  readonly message: DeliveryMessage;
  readonly mode: "agent" | "direct";
  readonly mirrorToSession: boolean;
}

export interface Deliverer {
  deliver(request: DeliveryRequest, signal?: AbortSignal): Promise<DeliveryReceipt>;
}

export interface DelivererDeps {
  readonly targets: TargetRegistry;
  readonly logger: Logger;
  readonly paths: SvcPaths;
}

export function createDeliverer({ targets }: DelivererDeps): Deliverer {
  return {
    async deliver(request, signal) {
      const target = targets.get(request.target);
      if (target === undefined) throw new DeliveryError(`delivery target "${request.target}" is not enabled`, false);
      return target.send(request.message, signal);
    },
  };
}
