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
  options: { timeoutMs?: number } = {},
): Promise<Record<string, TargetState>> {
  const timeoutMs = options.timeoutMs ?? 20_000;
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
        logger.info(
          { platform: target.name },
          `[delivery] ${target.name}: connected${who ? ` as ${who}` : ""}`,
        );
      } catch (err) {
        registry.setState(target.name, "failed");
        results[target.name] = "failed";
        logger.warn(
          { platform: target.name },
          `[delivery] ${target.name}: credentials check failed — ${describeError(err)}`,
        );
      }
    }),
  );
  return results;
}
