/**
 * Whether every event the gateway accepted has run: polls its `/metrics` until the finished runs
 * (`svc_run_duration_seconds_count`, every outcome) reach the accepted events
 * (`svc_webhook_events_total{outcome="accepted"}`). The bench waits for it after the accepted rows, so the
 * runs still queued do not load the rows after them, and reports a run that never came as lost.
 */

export interface RunsSettled {
  readonly accepted: number;
  readonly ran: number;
  /** Milliseconds from the call until the last run finished (or until it gave up). */
  readonly waitedMs: number;
}

/** The sum of every sample of `name` whose labels include `labels` (Prometheus text format). */
export function metricSum(text: string, name: string, labels = ""): number {
  let sum = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!line.includes(labels)) continue;
    sum += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return sum;
}

export async function runsSettled(port: number, timeoutMs = 180_000): Promise<RunsSettled> {
  const started = Date.now();
  for (;;) {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const accepted = metricSum(text, "svc_webhook_events_total", 'outcome="accepted"');
    const ran = metricSum(text, "svc_run_duration_seconds_count");
    const waitedMs = Date.now() - started;
    if (ran >= accepted || waitedMs > timeoutMs) return { accepted, ran, waitedMs };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
