import type { LoadedConfig } from "../../config/load.js";
import { type SvcPaths, svcHome } from "../../config/paths.js";
import { isConfigProblem } from "../../errors.js";
import { runningPid } from "../../io/gatewayState.js";
import { recordedState } from "../gatewayLookup.js";
import { configWithEnabledNote } from "./config.js";

/** What `svc webhook deliveries` reads: the config when it loads, and the home its history is under. */
export interface HistoryConfig {
  readonly home: string;
  /** Undefined when config.yaml does not load: the history is read all the same. */
  readonly loaded: LoadedConfig | undefined;
}

/**
 * The config for `svc webhook deliveries`. The history is on disk whatever config.yaml holds now: a file that
 * no longer loads (an edit the running gateway's reload refused, keeping its running config) does not hide it;
 * a note on stderr says what is wrong with the file and that what needs it is not checked.
 */
export async function historyConfig(): Promise<HistoryConfig> {
  try {
    const loaded = await configWithEnabledNote();
    return { home: loaded.paths.home, loaded };
  } catch (err) {
    if (!isConfigProblem(err)) throw err;
    process.stderr.write(
      `Note: ${err.message}\n  — the delivery history below is read without it (its routes and platforms.webhook.delivery_history are not checked)\n`,
    );
    return { home: svcHome(), loaded: undefined };
  }
}

/**
 * `platforms.webhook.delivery_history` as the running gateway of this home started with it (a change takes a
 * restart), when one runs here and its `gateway.json` says (an older svc's does not).
 */
export function runningHistory(paths: SvcPaths): { readonly pid: number; readonly on: boolean } | undefined {
  let pid: number | undefined;
  try {
    pid = runningPid(paths);
  } catch {
    return undefined; // unreadable, or of another PID namespace: its state is not judged from here
  }
  const on = pid === undefined ? undefined : recordedState(paths, pid)?.delivery_history;
  return pid === undefined || on === undefined ? undefined : { pid, on };
}
