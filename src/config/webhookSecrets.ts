import type { Config } from "./schema.js";
import { INSECURE_NO_AUTH } from "./sections/webhook.js";

/**
 * The webhook secrets of config.yaml as the gateway checks them: the global one (`WEBHOOK_SECRET`
 * applied) and each static route's own, after `${VAR}` interpolation. A `command` agent's environment
 * leaves out every variable holding one of them (`secret: ${GH_SECRET}` puts the secret in GH_SECRET),
 * as it leaves out WEBHOOK_SECRET: the agent reads untrusted payloads and must not be able to sign as
 * a sender.
 */
export function webhookSecretValues(config: Pick<Config, "platforms">): string[] {
  const webhook = config.platforms.webhook;
  const values = new Set<string>();
  if (webhook.secret !== undefined) values.add(webhook.secret);
  for (const route of Object.values(webhook.routes)) if (route.secret !== undefined) values.add(route.secret);
  values.delete(INSECURE_NO_AUTH);
  return [...values];
}

/**
 * The secrets of the served subscriptions (`webhook_subscriptions.json`, or Redis), hidden as those of
 * config.yaml are: the agent runs as svc's user and can read the file a payload points it at.
 */
export function subscriptionSecretValues(
  routes: Iterable<{ readonly secret?: string | undefined }>,
): string[] {
  const values: string[] = [];
  for (const route of routes)
    if (route.secret !== undefined && route.secret !== INSECURE_NO_AUTH) values.push(route.secret);
  return values;
}

/**
 * The secrets of every stored subscription record (`webhook_subscriptions.json`'s, or Redis's), served or
 * not: a disabled one (`svc webhook disable`), or one the gateway ignores, still holds a secret its sender
 * signs with, which `svc webhook enable` brings back. Hidden as the served ones' are.
 */
export function storedRecordSecrets(records: Readonly<Record<string, unknown>>): string[] {
  return subscriptionSecretValues(
    Object.values(records).map((record) => {
      const secret = (record as { secret?: unknown } | null)?.secret;
      return { secret: typeof secret === "string" ? secret : undefined };
    }),
  );
}
