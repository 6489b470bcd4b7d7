import type { Config } from "../../config/schema.js";
import { logTarget } from "./log.js";
import type { DeliveryTarget, TargetDeps } from "./target.js";

/** Target names users may write in `deliver`, mapped to the canonical platform name. */
export const TARGET_ALIASES: Readonly<Record<string, string>> = {
  log: "log",
};

export function canonicalTarget(name: string): string | undefined {
  return TARGET_ALIASES[name];
}

export interface TargetRegistry {
  get(name: string): DeliveryTarget | undefined;
  /** Canonical names of the targets that are enabled and usable. */
  enabled(): readonly string[];
}

/** Builds the targets the configuration enables (`log` always). */
export function createTargets(_config: Config, deps: TargetDeps): TargetRegistry {
  const targets = new Map<string, DeliveryTarget>([["log", logTarget(deps)]]);
  return {
    get: (name) => {
      const canonical = canonicalTarget(name);
      return canonical === undefined ? undefined : targets.get(canonical);
    },
    enabled: () => [...targets.keys()],
  };
}
