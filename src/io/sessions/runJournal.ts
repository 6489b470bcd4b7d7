import {
  createWriteStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  type WriteStream,
} from "node:fs";
import { join } from "node:path";
import { runSessionKey, type SessionEntry } from "./store.js";

/** One webhook-started agent run: its own session `webhook:<route>:<delivery_id>`. */
export interface RunSession {
  readonly key: string;
  readonly route: string;
  readonly delivery_id: string;
  readonly at: string;
  readonly entries: readonly SessionEntry[];
}

export interface RunToRecord {
  readonly route: string;
  readonly deliveryId: string;
  readonly prompt: string;
  readonly reply: string;
}

export interface RunJournal {
  /** Queues one line; never blocks the event loop and never throws (errors go to `onError`). */
  record(run: RunToRecord): void;
  /** Resolves once everything recorded so far is written and the file is closed. */
  close(): Promise<void>;
}

export const RUN_JOURNAL_DIR = "webhook-runs";

/**
 * Run sessions go to a daily journal `sessions/webhook-runs/<YYYY-MM-DD>.jsonl`, one JSON line a run,
 * through one O_APPEND stream: a burst of thousands of runs costs no lock, no index rewrite and no
 * synchronous write on the request path. Chat sessions (few, long-lived) keep the indexed store.
 */
export function createRunJournal(
  sessionsDir: string,
  onError: (err: unknown) => void,
  now: () => Date = () => new Date(),
): RunJournal {
  const dir = join(sessionsDir, RUN_JOURNAL_DIR);
  let day = "";
  let stream: WriteStream | undefined;
  const open = (today: string) => {
    stream?.end();
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    stream = createWriteStream(join(dir, `${today}.jsonl`), { flags: "a", mode: 0o600 });
    stream.on("error", onError);
    day = today;
    return stream;
  };
  return {
    record(run) {
      try {
        const at = now().toISOString();
        const today = at.slice(0, 10);
        const out = today === day && stream !== undefined ? stream : open(today);
        const session: RunSession = {
          key: runSessionKey(run.route, run.deliveryId),
          route: run.route,
          delivery_id: run.deliveryId,
          at,
          entries: [
            { role: "user", content: run.prompt, at },
            { role: "assistant", content: run.reply, at },
          ],
        };
        out.write(`${JSON.stringify(session)}\n`);
      } catch (err) {
        onError(err);
      }
    },
    close() {
      const current = stream;
      stream = undefined;
      day = "";
      if (current === undefined) return Promise.resolve();
      return new Promise((resolve) => current.end(resolve));
    },
  };
}

/** Finds a run session by key (`webhook:<route>:<delivery_id>`), newest journal first. */
export function findRunSession(sessionsDir: string, key: string): RunSession | undefined {
  const dir = join(sessionsDir, RUN_JOURNAL_DIR);
  if (!existsSync(dir)) return undefined;
  const days = readdirSync(dir)
    .filter((name) => name.endsWith(".jsonl"))
    .sort()
    .reverse();
  for (const name of days) {
    const lines = readFileSync(join(dir, name), "utf8").split("\n");
    for (let i = lines.length - 1; i >= 0; i--) {
      const line = lines[i];
      if (!line) continue;
      try {
        const session = JSON.parse(line) as RunSession;
        if (session.key === key) return session;
      } catch {
        // A torn last line from a hard kill: skip it.
      }
    }
  }
  return undefined;
}
