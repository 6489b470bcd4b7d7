import { givenBy } from "../config/givenValues.js";
import { type LoadedConfig, loadConfig } from "../config/load.js";
import { settingKey } from "../config/sections/webhook.js";
import { SvcError } from "../errors.js";
import { listenHostProblem } from "../io/http/listenProbe.js";
import type { GatewayOptions } from "./types.js";

/**
 * A start the startup rules refused, with the host it could not have listened on either (a name that does
 * not resolve, an address of another machine) among its problems, as `svc config check` names them all in
 * one pass: otherwise that host was found only by the next start, once the rules' problems were fixed. Any
 * other error as it is.
 */
export async function withUnlistenableHost(err: unknown, options: GatewayOptions): Promise<unknown> {
  if (!(err instanceof SvcError) || err.code !== "startup_refused") return err;
  let loaded: LoadedConfig;
  try {
    loaded = loadConfig({
      ...(options.home === undefined ? {} : { home: options.home }),
      ...(options.env === undefined ? {} : { env: options.env }),
    });
  } catch {
    return err;
  }
  const webhook = loaded.config.platforms.webhook;
  if (!webhook.enabled) return err;
  const hostKey = settingKey(webhook, "host");
  const problem = await listenHostProblem(
    options.host ?? webhook.host,
    hostKey,
    options.host === undefined ? givenBy(webhook, "host") : undefined,
  );
  if (problem === undefined) return err;
  const where = options.host === undefined ? `${loaded.paths.config}: ${hostKey}` : "--host";
  return new SvcError("startup_refused", `${err.message}\n${where}: ${problem}`);
}
