/**
 * A cron store (`cron/jobs.json`) holding one enabled job `j1` that logs its reply (unless `job` gives
 * another `deliver`), as the tests write it.
 */
export function oneJobStore(
  job: { name: string; prompt: string; next_run: string } & Record<string, unknown>,
): string {
  return JSON.stringify({
    revision: 1,
    jobs: {
      j1: {
        id: "j1",
        schedule: "every 1d",
        deliver: "log",
        deliver_extra: {},
        state: "enabled",
        created_at: "2025-11-22T00:00:00.000Z",
        ...job,
      },
    },
  });
}

/**
 * A cron store (`cron/jobs.json`) holding `jobs` by id, each an enabled hourly job saying `hi` with its
 * `id` and `name` and whatever else it gives (written by hand, as a user's edited file would be).
 */
export function handWrittenJobs(jobs: Record<string, Record<string, unknown>>): string {
  const base = { schedule: "every 1h", prompt: "hi", state: "enabled" };
  return JSON.stringify({
    revision: 1,
    jobs: Object.fromEntries(Object.entries(jobs).map(([id, job]) => [id, { ...base, id, ...job }])),
  });
}
