/** A cron store (`cron/jobs.json`) holding one enabled job `j1` that logs its reply, as the tests write it. */
export function oneJobStore(job: { name: string; prompt: string; next_run: string }): string {
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
