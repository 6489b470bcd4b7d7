import { discoverForFlow, type FlowKind } from "../../io/oauth/discovery.js";
import type { OAuthFetches } from "../../io/oauth/fetch.js";
import type { StoredMetadata } from "../../io/oauth/tokenStore.js";
import type { OAuthJob } from "./context.js";

/** Discovery for a login, refresh or step-up of `job`'s server, with the advice naming its profile and flow. */
export function discoverForJob(
  job: OAuthJob,
  flow: FlowKind,
  fetches: OAuthFetches,
): Promise<StoredMetadata> {
  return discoverForFlow(
    job.serverName,
    job.entry.url,
    flow,
    fetches,
    job.now(),
    job.profile,
    job.entry.oauth?.flow === "device",
  );
}
