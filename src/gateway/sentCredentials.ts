import { keptCredentials } from "../io/loadedCredentials.js";

/**
 * What the MCP servers send as credentials, as the runs hide it: the values sent now, and those a run under
 * way may have been given before they stopped being sent (a token a reconnect replaced while the run went on).
 */
export interface SentCredentials {
  /** Every value to hide now: one frozen list, the same array while none changed. */
  list(): readonly string[];
  /**
   * Held by a run from its start to its end: a value no longer sent once it began stays in `list` until it lets
   * go (and every other run that began before that value went has let go too). The function lets go, once.
   */
  hold(): () => void;
}

export interface SentCredentialsLedger extends SentCredentials {
  /** The values sent now (each render of the servers' entries and of what their live connections were made with). */
  set(values: readonly string[]): void;
}

const NONE: readonly string[] = Object.freeze([]);

/**
 * The values sent now, and each one that stopped being sent while a run held the ledger: kept until every run
 * that began before it went has ended, so what a run was given is hidden in all of its output. What is kept is
 * bounded by the runs under way (each ends at its timeout at the latest): with none, only the values sent now.
 */
export function sentCredentialsLedger(): SentCredentialsLedger {
  let sent: readonly string[] = NONE;
  // A value no longer sent → the count of `set`s when it went; a hold → that count when it began.
  const gone = new Map<string, number>();
  const holds = new Map<number, number>();
  let sets = 0;
  let nextHold = 0;
  let list: readonly string[] = NONE;
  const rebuild = () => {
    const next = gone.size === 0 ? sent : keptCredentials([...sent, ...gone.keys()]);
    if (next.length === list.length && next.every((value, i) => value === list[i])) return;
    list = next.length === 0 ? NONE : Object.freeze([...next]);
  };
  // Lets go of the values no run under way began before.
  const prune = () => {
    let oldest = Number.POSITIVE_INFINITY;
    for (const began of holds.values()) oldest = Math.min(oldest, began);
    for (const [value, wentAt] of gone) if (wentAt <= oldest) gone.delete(value);
  };
  return {
    list: () => list,
    hold() {
      const id = nextHold++;
      holds.set(id, sets);
      return () => {
        if (!holds.delete(id)) return;
        prune();
        rebuild();
      };
    },
    set(values) {
      sets += 1;
      const now = new Set(values);
      if (holds.size > 0) for (const value of sent) if (!now.has(value)) gone.set(value, sets);
      for (const value of now) gone.delete(value);
      sent = Object.freeze([...values]);
      rebuild();
    },
  };
}
