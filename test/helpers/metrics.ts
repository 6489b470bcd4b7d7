/** The value of one sample line of a Prometheus text, e.g. `svc_webhook_requests_total{route="pr",status="202"}`. */
export function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** Scrapes `/metrics` at `base` (`http://127.0.0.1:<port>`) and reads one series from it. */
export async function scrapedSample(base: string, series: string): Promise<number | undefined> {
  const res = await fetch(`${base}/metrics`);
  return sample(await res.text(), series);
}
