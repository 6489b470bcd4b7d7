import type { Config } from "../config/schema.js";
import { withHost } from "../config/sections/webhook.js";
import { type HostSource, webhookStartupProblems } from "../config/validate.js";
import { refusedTargets, targetStartupProblems } from "../io/targets/validate.js";

/** A host given on the command line, as the refusals name it. */
export const hostFlag: HostSource = (host) => `--host is ${host} (it overrides platforms.webhook.host)`;

/**
 * The address a running gateway is bound to, as a reload's refusal names it: the file's host at the start,
 * which a reload cannot move.
 */
export const listeningOn: HostSource = (host) =>
  `the gateway listens on ${host}, the host it started with (a change of host takes effect after a restart)`;

/**
 * Every reason the gateway refuses to start with `config` (the route rules of docs/webhook.md, a route whose
 * delivery target cannot work), judged for the address it will bind (`host`, e.g. from `--host`, which the
 * messages name as `hostSource` says: `--host` unless told otherwise).
 * `svc gateway setup` runs the same check, so it never says "start the gateway" for a config that won't.
 */
export function startupProblems(
  config: Config,
  file: string,
  host?: string,
  hostSource: HostSource = hostFlag,
): string[] {
  const webhook = config.platforms.webhook;
  const check = {
    ...config,
    platforms: { ...config.platforms, webhook: withHost(webhook, host ?? webhook.host) },
  };
  return [
    ...(host === undefined
      ? webhookStartupProblems(check, file)
      : webhookStartupProblems(check, file, hostSource)),
    ...refusedTargets(targetStartupProblems(check, file)),
  ];
}
