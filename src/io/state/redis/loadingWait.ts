import type { Redis } from "ioredis";

/** What is said of a Redis that answers LOADING (`refusalHint`), and of one a connection waits for to load. */
export const LOADING_HINT = "Redis is loading its data after a restart: it answers once loaded";

/** What is said once a connection that said it waited for a loading Redis finds it loaded. */
export const LOADED_HINT = "Redis has loaded its data";

/** How often the wait for a loading Redis is said again. */
export const LOADING_SAID_EVERY_MS = 10_000;

/** How far a Redis's load of its data is, from its `INFO persistence`; undefined when it is not loading. */
export interface LoadingProgress {
  readonly percent?: number;
  readonly etaSeconds?: number;
}

export function loadingProgress(info: string): LoadingProgress | undefined {
  if (!/^loading:1\r?$/m.test(info)) return undefined;
  const field = (name: string) => {
    const value = Number(new RegExp(`^${name}:([0-9.]+)\\r?$`, "m").exec(info)?.[1]);
    return Number.isFinite(value) ? value : undefined;
  };
  const percent = field("loading_loaded_perc");
  const etaSeconds = field("loading_eta_seconds");
  return {
    ...(percent === undefined ? {} : { percent }),
    ...(etaSeconds === undefined ? {} : { etaSeconds }),
  };
}

/** The line said while a connection waits for `label` to load its data. */
export function loadingLine(label: string, progress: LoadingProgress): string {
  const how = [
    progress.percent === undefined ? undefined : `${progress.percent.toFixed(0)}% loaded`,
    progress.etaSeconds === undefined ? undefined : `about ${Math.round(progress.etaSeconds)} s left`,
  ].filter((part) => part !== undefined);
  return `${LOADING_HINT} (${label}); svc waits for it${how.length === 0 ? "" : ` — ${how.join(", ")}`}`;
}

/**
 * Says, while `redis` connects to a server still loading its data, that it waits for it: ioredis's ready
 * check waits for the load (re-reading INFO) without a word and without a bound. Said once the connection
 * is open and Redis says it is loading, then every `everyMs` with how far the load is, until the
 * connection is ready (said too: `LOADED_HINT`) or closed. Returns the function that stops it.
 */
export function sayWhileLoading(
  redis: Redis,
  label: string,
  say: (line: string) => void,
  everyMs = LOADING_SAID_EVERY_MS,
): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let said = false;
  const check = () => {
    // "connect": the connection is open, and ioredis's ready check has not found Redis loaded yet.
    if (stopped || redis.status !== "connect") return;
    // INFO is one of the commands Redis answers while it loads (and ioredis sends before the connection is ready).
    redis.info("persistence").then(
      (info) => {
        const progress = loadingProgress(info);
        if (stopped || progress === undefined) return;
        said = true;
        say(loadingLine(label, progress));
        timer = setTimeout(check, everyMs);
        timer.unref();
      },
      () => {},
    );
  };
  // ioredis emits "connect" once the connection's handshake (AUTH or HELLO) is sent: a Redis with a password
  // answers nothing before it.
  redis.on("connect", check);
  // The wait said is said to be over, so what waited longer after it is not laid at the load's door.
  const loaded = () => {
    if (!stopped && said) say(`${LOADED_HINT} (${label}); svc goes on`);
  };
  redis.once("ready", loaded);
  return () => {
    stopped = true;
    clearTimeout(timer);
    redis.off("connect", check);
    redis.off("ready", loaded);
  };
}
