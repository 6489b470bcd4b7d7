import { configSchema } from "../../../src/config/schema.js";
import { createTargets, type TargetRegistry } from "../../../src/io/targets/registry.js";
import { DEFAULT_RETRY, retryingSteps } from "../../../src/io/targets/retry.js";
import type { DeliveryMessage } from "../../../src/io/targets/target.js";
import { captureLogger } from "../../fakes/logCapture.js";

/** A registry built through the real config schema from a `platforms` mapping. */
export function registryFor(platforms: Record<string, unknown>, env?: NodeJS.ProcessEnv): TargetRegistry {
  const config = configSchema.parse({ platforms });
  return createTargets(config, { logger: captureLogger().logger, ...(env === undefined ? {} : { env }) });
}

export function message(
  text: string,
  extra: Record<string, string> = {},
  overrides: Partial<DeliveryMessage> = {},
): DeliveryMessage {
  return { text, extra, route: "alerts", deliveryId: "d1", profile: undefined, ...overrides };
}

/** The error `registry.get(name).send(msg)` fails with; throws when the target is missing or the send succeeds. */
export async function sendError(
  registry: TargetRegistry,
  name: string,
  msg: DeliveryMessage,
): Promise<unknown> {
  const target = registry.get(name);
  if (target === undefined) throw new Error(`${name} not built`);
  return target.send(msg).then(
    () => {
      throw new Error(`${name}: the send succeeded`);
    },
    (e: unknown) => e,
  );
}

/** Agent-mode retries with the default policy whose waits are recorded instead of slept. */
export function recordedRetries(): { waits: number[]; runStep: ReturnType<typeof retryingSteps> } {
  const waits: number[] = [];
  const runStep = retryingSteps(
    DEFAULT_RETRY,
    async (ms) => {
      waits.push(ms);
    },
    () => {},
  );
  return { waits, runStep };
}
