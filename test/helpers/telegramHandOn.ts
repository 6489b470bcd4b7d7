import { existsSync, readFileSync } from "node:fs";
import type { FakeReply } from "../fakes/httpFake.js";
import { sample } from "./metrics.js";
import { type ClusterNode, clusterConfig } from "./redisCluster.js";

/**
 * For the tests of a delivery handed on between instances on one Redis while it waits to retry: the
 * Telegram fake's 429 answer, the instances' config and what the tests read of them.
 */

/** Telegram's answer to a message it refuses for now: 429 with `Retry-After` and `retry_after`. */
export function telegramTooMany(retryAfterS: number): FakeReply {
  return {
    status: 429,
    headers: { "Retry-After": String(retryAfterS) },
    json: {
      ok: false,
      error_code: 429,
      description: `Too Many Requests: retry after ${retryAfterS}`,
      parameters: { retry_after: retryAfterS },
    },
  };
}

/**
 * A config of instances on `redisUrl` under `prefix`: route `route` (no auth) renders `prompt` to the
 * Telegram chat `chat` of the fake at `telegramUrl`; one run at a time, the agent notes each run's delivery
 * id in `agentLog` and answers with the prompt.
 */
export function handOnConfig(options: {
  readonly redisUrl: string;
  readonly prefix: string;
  readonly telegramUrl: string;
  readonly route: string;
  readonly prompt: string;
  readonly chat: string;
  readonly agentLog: string;
}): Record<string, unknown> {
  const base = clusterConfig(
    options.redisUrl,
    options.prefix,
    {
      [options.route]: {
        secret: "INSECURE_NO_AUTH",
        prompt: options.prompt,
        deliver: "telegram",
        deliver_extra: { chat_id: options.chat },
      },
    },
    {
      provider: "command",
      command: ["sh", "-c", 'echo "$SVC_DELIVERY_ID" >> "$0"; cat', options.agentLog],
      max_concurrent_runs: 1,
    },
  );
  return {
    ...base,
    platforms: {
      ...(base.platforms as Record<string, unknown>),
      telegram: { enabled: true, token: `1:${options.route}`, base_url: options.telegramUrl },
    },
  };
}

/** The instance's `svc_deliveries_retrying` gauge. */
export const deliveriesRetrying = async (node: ClusterNode): Promise<number | undefined> =>
  sample(await (await fetch(node.url("/metrics"))).text(), "svc_deliveries_retrying");

/** The instance's log lines that hold `part`. */
export const linesSaying = (node: ClusterNode, part: string) =>
  node.logs().filter((line) => line.msg.includes(part));

/** The delivery ids the agent noted, one per run. */
export const agentRuns = (file: string): string[] =>
  existsSync(file)
    ? readFileSync(file, "utf8")
        .split("\n")
        .filter((line) => line !== "")
    : [];
