import { SvcError } from "../../errors.js";
import { parseSubscription, type Subscription } from "../../io/stores/subscriptions.js";

/** The stored subscription of this name, validated (its unknown fields in `extra`); none: undefined. */
export function storedRecord(
  path: string,
  name: string,
  raw: unknown,
): { value: Subscription; extra: Record<string, unknown> } | undefined {
  if (raw === undefined) return undefined;
  const parsed = parseSubscription(path, name, raw);
  if (!parsed.ok)
    throw new SvcError(
      "store_corrupt",
      `the stored subscription is invalid — fix ${path} or remove it (svc webhook remove ${name}):\n${parsed.problems.join("\n")}`,
    );
  return parsed;
}

export function existingRecord(path: string, name: string, raw: unknown): Subscription | undefined {
  return storedRecord(path, name, raw)?.value;
}
