/**
 * `node --import tsx bench/sessionMirror.ts [sessions]`: what one `mirror_to_session` delivery costs the
 * gateway's event loop with a large session index (10,000 sessions by default, ~3.5 MB of index.json).
 * Times, in one process:
 * - `lookup, index unchanged`: the longest the event loop was held by `SessionStore.find` of a chat (the
 *   lookup a mirrored delivery makes, on the session index's thread), the index unchanged for over 2 s;
 * - `lookup, index just written`: the same right after this process's locked write (its `append`), within
 *   the 2 s in which a change need not show in the file's stat (the bytes are compared);
 * - `mirror`: `mirrorDelivery` to a chat, one after another (each one's lookup finds the index just written
 *   by the one before, then its locked rewrite: the transcript appended, the index rewritten, fsynced and
 *   renamed), from its call until it resolves;
 * - `mirror, event loop held`: the longest the event loop was held in each of those (the longest time
 *   between two turns of a `setImmediate` loop run alongside), which is what webhook requests wait behind;
 * - `lookup after another process`: `find` once a second process rewrote the index (parsed again), from its
 *   call until it resolves, and the longest the event loop was held meanwhile;
 * - `mirror after another process` (and the longest the event loop was held in it): `mirrorDelivery` once a
 *   second process rewrote the index; `open() of a new chat, held`: the longest hold of `openChat` of a new chat.
 * Each the median and the largest of its rounds (`BENCH_MIRROR_ROUNDS`, default 15), after one warm-up.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { mirrorDelivery } from "../src/io/sessions/mirror.js";
import { SessionStore } from "../src/io/sessions/store.js";

const count = Number(process.argv[2] ?? 10_000);
const rounds = Number(process.env.BENCH_MIRROR_ROUNDS ?? 15);
const home = mkdtempSync(join(tmpdir(), "svc-bench-mirror-"));
const sessionsDir = join(home, "sessions");
mkdirSync(join(sessionsDir, "telegram"), { recursive: true });

const sessions: Record<string, unknown> = {};
for (let i = 0; i < count; i++) {
  const chat = String(-1_000_000_000_000 - i);
  sessions[`telegram:${chat}`] = {
    key: `telegram:${chat}`,
    file: `telegram/${chat}.jsonl`,
    platform: "telegram",
    chat_id: chat,
    origin: { kind: "group", user_id: 9_007_199_254_740_993n.toString() },
    created_at: "2026-11-01T10:00:00.000Z",
    updated_at: "2026-12-01T10:00:00.000Z",
  };
}
const indexPath = join(sessionsDir, "index.json");
writeFileSync(indexPath, `${JSON.stringify({ version: 1, sessions }, null, 2)}\n`);
const chats = Object.keys(sessions).map((key) => key.slice("telegram:".length));
for (const chat of chats.slice(0, rounds + 1))
  writeFileSync(join(sessionsDir, "telegram", `${chat}.jsonl`), "");

const store = new SessionStore(sessionsDir);
const ms = (t0: number) => performance.now() - t0;
function stats(name: string, times: number[]) {
  const sorted = [...times].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] ?? 0;
  console.log(
    `${name.padEnd(32)} median ${median.toFixed(2).padStart(8)} ms   max ${(sorted.at(-1) ?? 0).toFixed(2).padStart(8)} ms`,
  );
}

/** The longest the event loop was held during a lookup (`SessionStore.find`, as a mirrored delivery makes it). */
async function lookupHeld(key: string): Promise<number> {
  return (await holding(() => store.find(key))).longest;
}

/**
 * `task`'s value, and the longest the event loop was held while it ran: the longest time between two turns
 * of a `setImmediate` loop (which turns at once whenever nothing else runs, whether or not I/O is pending).
 */
async function holding<T>(task: () => Promise<T>): Promise<{ value: T; longest: number }> {
  let longest = 0;
  let running = true;
  let last = performance.now();
  const turn = () => {
    const at = performance.now();
    longest = Math.max(longest, at - last);
    last = at;
    if (running) setImmediate(turn);
  };
  setImmediate(turn);
  const value = await task();
  running = false;
  longest = Math.max(longest, performance.now() - last);
  return { value, longest };
}

async function main() {
  console.log(
    `${count} sessions, index.json ${(statSync(indexPath).size / 1e6).toFixed(2)} MB, ${rounds} rounds, node ${process.version}`,
  );
  const key = `telegram:${chats[0]}`;
  // Past the 2 s in which a change need not show in the file's stat.
  await sleep(2100);
  await store.find(key);
  const lookups: number[] = [];
  for (let i = 0; i < rounds; i++) lookups.push(await lookupHeld(key));
  stats("lookup, index unchanged", lookups);

  const justWritten: number[] = [];
  for (let i = 0; i < rounds; i++) {
    await store.append(key, [{ role: "assistant", content: "an entry" }]);
    justWritten.push(await lookupHeld(key));
  }
  stats("lookup, index just written", justWritten);

  const request = (chatId: string) => ({
    home,
    profile: undefined,
    platform: "telegram",
    chatId,
    route: "alerts",
    text: "a delivered message",
  });
  await mirrorDelivery(request(chats[rounds] ?? ""));
  const mirrors: number[] = [];
  const holds: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    const { value, longest } = await holding(() => mirrorDelivery(request(chats[i] ?? "")));
    if (!value) throw new Error("not mirrored");
    mirrors.push(ms(t0));
    holds.push(longest);
  }
  stats("mirror", mirrors);
  stats("mirror, event loop held", holds);

  const afterOther: number[] = [];
  const afterOtherHeld: number[] = [];
  for (let i = 0; i < Math.min(rounds, 5); i++) {
    // Another process rewrites the index (a front end's change: one more session).
    execFileSync(process.execPath, [
      "-e",
      `const fs = require("node:fs");
       const p = ${JSON.stringify(indexPath)};
       const index = JSON.parse(fs.readFileSync(p, "utf8"));
       index.sessions["telegram:other${i}"] = { key: "telegram:other${i}", file: "telegram/other${i}.jsonl" };
       fs.writeFileSync(p + ".tmp", JSON.stringify(index, null, 2));
       fs.renameSync(p + ".tmp", p);`,
    ]);
    const t0 = performance.now();
    const { value, longest } = await holding(() => store.find(`telegram:other${i}`));
    if (value === undefined) throw new Error("stale lookup");
    afterOther.push(ms(t0));
    afterOtherHeld.push(longest);
  }
  stats("lookup after another process", afterOther);
  stats("  event loop held", afterOtherHeld);

  // A mirrored delivery right after another process changed the index (its lookup and locked rewrite find
  // a parse this process did not make), and a new chat's `open()`: each the longest the event loop was held.
  const mirrorAfterOther: number[] = [];
  const mirrorAfterOtherHeld: number[] = [];
  const opens: number[] = [];
  for (let i = 0; i < Math.min(rounds, 5); i++) {
    otherProcessAdds(`telegram:again${i}`);
    const t0 = performance.now();
    const { value, longest } = await holding(() => mirrorDelivery(request(chats[i] ?? "")));
    if (!value) throw new Error("not mirrored");
    mirrorAfterOther.push(ms(t0));
    mirrorAfterOtherHeld.push(longest);
    const opened = await holding(() => store.openChat("telegram", `new${i}`));
    opens.push(opened.longest);
  }
  stats("mirror after another process", mirrorAfterOther);
  stats("  event loop held", mirrorAfterOtherHeld);
  stats("open() of a new chat, held", opens);
}

/** Another process rewrites the index with one more session (as a chat front end adds a chat). */
function otherProcessAdds(key: string): void {
  execFileSync(process.execPath, [
    "-e",
    `const fs = require("node:fs");
     const p = ${JSON.stringify(indexPath)};
     const index = JSON.parse(fs.readFileSync(p, "utf8"));
     index.sessions[${JSON.stringify(key)}] = { key: ${JSON.stringify(key)}, file: "telegram/other.jsonl" };
     fs.writeFileSync(p + ".tmp", JSON.stringify(index, null, 2));
     fs.renameSync(p + ".tmp", p);`,
  ]);
}

try {
  await main();
} finally {
  rmSync(home, { recursive: true, force: true });
}
