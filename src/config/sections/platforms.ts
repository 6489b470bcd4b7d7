import { z } from "zod";
import { webhookSchema } from "./webhook.js";

/** Delivery platforms other than the webhook adapter; refined by the delivery-targets work. */
export const platformSchema = z.looseObject({
  enabled: z.boolean().default(false),
  home_channel: z.union([z.string(), z.number()]).optional(),
  base_url: z.string().url().optional(),
});
export type PlatformSettings = z.infer<typeof platformSchema>;

export const platformsSchema = z
  .looseObject({ webhook: webhookSchema.optional() })
  .transform((p) => ({ ...p, webhook: webhookSchema.parse(p.webhook ?? {}) }))
  .default({ webhook: webhookSchema.parse({}) });
