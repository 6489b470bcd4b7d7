import { timeoutSignal } from "../../clock.js";
import { describeError } from "../../errors.js";
import type { Logger } from "../log.js";
import type { TargetRegistry, TargetState } from "./registry.js";

/**
 * Runs each enabled platform's credentials check (Telegram getMe, Slack auth.test, `gh auth status`, ...)
 * and logs its state. Never throws: a failed platform is reported, and deliveries to it will fail loudly.
 */
export async function checkTargets(
  registry: TargetRegistry,
  logger: Logger,
  options: {
    timeoutMs?: number;
    /**
     * False once a reload replaced these targets: a check that ends then (a slow platform) is said at DEBUG
     * only, so a failure of the settings left behind does not come after the check of those in use.
     */
    current?: () => boolean;
  } = {},
): Promise<Record<string, TargetState>> {
  const timeoutMs = options.timeoutMs ?? 20_000;
  const replaced = () => options.current?.() === false;
  const results: Record<string, TargetState> = {};
  await Promise.all(
    registry.all().map(async (target) => {
      if (target.check === undefined) {
        results[target.name] = "connected";
        return;
      }
      try {
        const who = await target.check(timeoutSignal(timeoutMs));
        registry.setState(target.name, "connected");
        results[target.name] = "connected";
        if (replaced()) return staleResult(logger, target.name, `connected${who ? ` as ${who}` : ""}`);
        logger.info(
          { platform: target.name },
          `[delivery] ${target.name}: connected${who ? ` as ${who}` : ""}`,
        );
      } catch (err) {
        registry.setState(target.name, "failed");
        results[target.name] = "failed";
        if (replaced()) return staleResult(logger, target.name, `failed — ${describeError(err)}`);
        logger.warn(
          { platform: target.name },
          `[delivery] ${target.name}: credentials check failed — ${describeError(err)}`,
        );
      }
    }),
  );
  return results;
}

function staleResult(logger: Logger, platform: string, outcome: string): void {
  logger.debug(
    { platform },
    `[delivery] ${platform}: credentials check of settings a reload has since replaced (not in use): ${outcome}`,
  );
}
