import { z } from "zod";

/**
 * Where what a 202 promises is kept: `local` (an append-only journal under `$SVC_HOME/state/`, the
 * embedded default) or `redis` (shared by several gateway processes).
 */
export const stateSchema = z
  .strictObject({
    backend: z.enum(["local", "redis"]).default("local"),
    redis_url: z.string().min(1).optional(),
    /** Every key svc writes in Redis starts with `<prefix>:`; instances that share work share it. */
    redis_key_prefix: z
      .string()
      .regex(/^[A-Za-z0-9_.-]{1,64}$/, "letters, digits, '.', '_' and '-' (1-64), e.g. svc")
      .optional(),
  })
  .superRefine((state, ctx) => {
    if (state.backend === "redis" && state.redis_url === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["redis_url"],
        message: 'missing — backend "redis" needs redis_url: redis://host:6379/0',
      });
    }
    if (state.redis_url !== undefined && !/^rediss?:\/\//.test(state.redis_url)) {
      ctx.addIssue({
        code: "custom",
        path: ["redis_url"],
        message: "not a redis:// or rediss:// URL — write it as redis://host:6379/0",
      });
    }
  })
  .default({ backend: "local" });
export type StateSettings = z.infer<typeof stateSchema>;
