import { isLoopbackHost } from "../config/host.js";

/**
 * `metrics` unset serves /metrics on a loopback bind only: on another bind (also the one a config.yaml
 * without `host` gets) a scrape is answered 404 as an unknown path, which says nothing, so the start does.
 */
export function metricsNotServedNotice(
  webhook: { readonly metrics?: boolean | undefined },
  host: string,
): string | undefined {
  if (webhook.metrics !== undefined || isLoopbackHost(host)) return undefined;
  return `[webhook] GET /metrics is not served: platforms.webhook.metrics is unset, which serves it on a loopback bind only, and the gateway listens on ${host} — to scrape it, set platforms.webhook.metrics: true and let only the scraper's network reach /metrics (restart)`;
}
