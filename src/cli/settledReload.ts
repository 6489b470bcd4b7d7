import type { Clock } from "../clock.js";
import { RELOAD_SETTLE, type SettleTimes, settledFiles } from "../io/settledFiles.js";

export interface SettledReloadDeps {
  /** config.yaml and .env: what the reload reads. */
  readonly files: readonly string[];
  readonly clock: Pick<Clock, "setTimeout" | "clearTimeout">;
  readonly warn: (line: string) => void;
  readonly info: (line: string) => void;
  readonly reload: () => void;
  readonly times?: SettleTimes;
}

export interface SettledReloader {
  /** A SIGHUP: the reload, once the files have settled. */
  readonly sighup: () => Promise<void>;
  /** The stop began: a reload still waiting is not made (it would restart what stops). */
  readonly stopBegan: () => void;
}

/**
 * The SIGHUP reload, made once config.yaml and .env have stayed unchanged for a moment (io/settledFiles.ts):
 * a SIGHUP sent while an editor or a copy is still writing the file reloads the file it finished, not a cut
 * that still parses. A SIGHUP that comes while one waits adds one reload after it (for an edit it may have
 * missed), never more.
 */
export function settledReloader(deps: SettledReloadDeps): SettledReloader {
  const times = deps.times ?? RELOAD_SETTLE;
  let waiting = false;
  let owed = false;
  let stopped = false;
  const sighup = async () => {
    if (stopped) return;
    if (waiting) {
      owed = true;
      return;
    }
    waiting = true;
    try {
      do {
        owed = false;
        const settled = await settledFiles(deps.files, deps.clock, times);
        if (stopped) return;
        if (!settled.settled)
          deps.warn(
            `[gateway] ${settled.changing.join(" and ")} still changed ${times.maxWaitMs / 1000} s after the SIGHUP: reloading what it holds now — if its writer was not done, send SIGHUP again once it is`,
          );
        deps.reload();
      } while (owed);
    } finally {
      waiting = false;
    }
  };
  const stopBegan = () => {
    if (stopped) return;
    stopped = true;
    // Said now, not once the wait ends: a stop with little to drain ends the process before that.
    // Said as a SIGHUP that arrives while stopping is (`svc mcp reload` points at the log).
    if (waiting)
      deps.info(
        `[gateway] SIGHUP received before the stop: ignored — the gateway began stopping while it waited for ${deps.files.join(" and ")} to stay unchanged; nothing is reloaded, the next start reads them`,
      );
  };
  return { sighup, stopBegan };
}
