import { z } from "zod";
import { formatJsonIssues } from "../../config/format.js";

/** A job's `last_run`, as the gateway and `svc cron run` write it after a run. */
export interface LastRunRecord {
  readonly at: string;
  readonly status: "ok" | "error" | "interrupted";
  readonly trigger: string;
  readonly error?: string;
}

/** The triggers svc writes: `schedule`, `manual`, `webhook:<route>:<delivery id>` (any text, line breaks too). */
const TRIGGER = /^(?:schedule|manual|webhook:.+)$/s;

const lastRunSchema = z.object({
  at: z.string().superRefine((text, ctx) => {
    if (Number.isNaN(Date.parse(text)))
      ctx.addIssue({
        code: "custom",
        message: `${JSON.stringify(text.slice(0, 40))} is not a time — write an ISO 8601 UTC time, such as "2026-12-02T09:00:00Z"`,
      });
  }),
  status: z.enum(["ok", "error", "interrupted"]),
  trigger: z.string().superRefine((text, ctx) => {
    if (!TRIGGER.test(text))
      ctx.addIssue({
        code: "custom",
        message: `${JSON.stringify(text.slice(0, 40))} is no trigger svc writes — expected schedule, manual or webhook:<route>:<delivery id>`,
      });
  }),
  error: z.string().optional(),
});

/**
 * Reads the `last_run` of job `key` (named `name`) in the cron store at `path`. It is only shown (`svc cron list`), so a
 * broken one hand-edited in never makes its job invalid: it is left out, and `problem` says what is wrong
 * with it, where the file has it, and what to do (the job runs on its schedule all the same).
 */
export function readLastRun(
  path: string,
  key: string,
  name: string,
  raw: unknown,
): { readonly lastRun?: LastRunRecord; readonly problem?: string } {
  if (raw === undefined) return {};
  const parsed = lastRunSchema.safeParse(raw, { reportInput: true });
  if (parsed.success) {
    const { error, ...rest } = parsed.data;
    return { lastRun: error === undefined ? rest : { ...rest, error } };
  }
  const issues = parsed.error.issues.map((issue) => ({
    ...issue,
    path: ["jobs", key, "last_run", ...issue.path],
  }));
  return {
    problem: `${formatJsonIssues(path, issues).split("\n").join("; ")} (cron job ${name}) — left out: svc cron list shows the job's last run as never until its next run records one; fix last_run in the file, or remove it`,
  };
}
