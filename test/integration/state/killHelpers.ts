import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import { readJournal } from "../../../src/io/state/journal/segments.js";
import { stateDir } from "../../../src/state/gatewayState.js";
import { LiveState } from "../../../src/state/liveState.js";
import type { TempHome } from "../../helpers/home.js";
import { type DeliveryAnswer, deliverSigned } from "../../helpers/http.js";

export const SECRET = "journal-kill-secret";

/**
 * A `command` agent held until `$SVC_HOME/go` exists; then it appends `<delivery id> <first prompt line>`
 * to runs.log. It gives up when the gateway that started it is gone (SIGKILL leaves no orphan that
 * would run the event a second time). A gateway killed between the fork and the shell's start has left
 * the shell an orphan already, its $PPID the reaper's (PID 1), which answers `kill -0` for ever: it exits too.
 */
const GATED = `[ "$PPID" -ne 1 ] || exit 1; while [ ! -e "$0/go" ]; do kill -0 $PPID 2>/dev/null || exit 1; sleep 0.05; done; printf "%s %s\\n" "$SVC_DELIVERY_ID" "$(head -n 1)" >> "$0/runs.log"`;

export function writeConfig(home: TempHome, routes: Record<string, unknown>, slots = 4): void {
  home.write(
    "config.yaml",
    stringify({
      agent: { provider: "command", command: ["sh", "-c", GATED, home.dir], max_concurrent_runs: slots },
      platforms: { webhook: { enabled: true, host: "127.0.0.1", port: 0, rate_limit: 100_000, routes } },
    }),
  );
}

export const openGate = (home: TempHome) => home.write("go", "");

/** Agents of `home` still alive (a killed gateway's agents notice within 50 ms and exit without running). */
export function agentsAlive(home: TempHome): number {
  let alive = 0;
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (cmdline.includes("kill -0 $PPID") && cmdline.includes(home.dir)) alive += 1;
    } catch {
      // Gone meanwhile.
    }
  }
  return alive;
}
export const closeGate = (home: TempHome) => rmSync(join(home.dir, "go"), { force: true });

/** runs.log lines as [delivery id, first prompt line]. */
export function ranLines(home: TempHome): Array<[string, string]> {
  const file = join(home.dir, "runs.log");
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => {
      const space = line.indexOf(" ");
      return [line.slice(0, space), line.slice(space + 1)];
    });
}

export function runCounts(home: TempHome): Map<string, number> {
  const counts = new Map<string, number>();
  for (const [id] of ranLines(home)) counts.set(id, (counts.get(id) ?? 0) + 1);
  return counts;
}

/** What the journal on disk says is live (read the way a restart reads it). */
export function liveOnDisk(home: TempHome): LiveState {
  const live = new LiveState();
  for (const record of readJournal(stateDir(home.dir)).records) live.apply(record);
  return live;
}

export type Answer = DeliveryAnswer;

/** An answer's HTTP status, or the error a request that got none ended with. */
export const statusOf = async (answer: Promise<Answer>) => {
  const got = await answer;
  return "status" in got ? got.status : got.error;
};

/** One signed GitHub-style delivery. */
export const deliver = (port: number, route: string, id: string, payload?: Record<string, unknown>) =>
  deliverSigned(port, route, id, SECRET, payload);

/**
 * Sends `ids` with `senders` concurrent senders; `onAnswer` sees each answer as it arrives (e.g. to
 * SIGKILL the gateway mid-burst). Resolves with the ids answered 202.
 */
export async function burst(
  port: number,
  route: string,
  ids: readonly string[],
  senders: number,
  onAnswer: (accepted: number) => void = () => {},
): Promise<string[]> {
  const accepted: string[] = [];
  let next = 0;
  const sender = async () => {
    while (next < ids.length) {
      const id = ids[next++] as string;
      const answer = await deliver(port, route, id);
      if ("status" in answer && answer.status === 202) {
        accepted.push(id);
        onAnswer(accepted.length);
      }
    }
  };
  await Promise.all(Array.from({ length: senders }, sender));
  return accepted;
}
