import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface, type Interface } from "node:readline";
import { afterAll, beforeAll, beforeEach, expect, it, vi } from "vitest";
import { parsedFileCache } from "../../../src/io/sessions/indexCache.js";
import { mirrorDelivery } from "../../../src/io/sessions/mirror.js";
import { SessionStore } from "../../../src/io/sessions/store.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

/**
 * `SessionStore.get` (the lookup a mirrored delivery makes before taking the index lock) keeps the index's
 * parse while the file's identity (device, inode, size, mtime, ctime) is the one it was read with: with
 * 10,000 sessions a parse held the event loop ~77 ms on every mirrored delivery. The chat front end and
 * other svc processes write index.json too; here a real second process changes it between lookups, in each
 * way a writer may: replaced (a rename), rewritten in place at the same size with its mtime set back,
 * removed, written again, and rewritten in place at the same size many times in quick succession. Within
 * 2 s of a change the kept parse is only used after a comparison of the file's bytes; the last test dates
 * the reads long after the changes, so that the file's identity alone decides, as it does past those 2 s.
 */
const EDITOR = `
  const fs = require("node:fs");
  const readline = require("node:readline");
  readline.createInterface({ input: process.stdin }).on("line", (line) => {
    const { op, path, text } = JSON.parse(line);
    if (op === "replace") {
      fs.writeFileSync(path + ".tmp", text);
      fs.renameSync(path + ".tmp", path);
    } else if (op === "inPlace") {
      // An editor saving over the file itself, keeping its times (touch -r): only its ctime moves (and its
      // size, unless the text is as long as the file's).
      const before = fs.statSync(path);
      const fd = fs.openSync(path, "r+");
      fs.writeSync(fd, text, 0);
      fs.ftruncateSync(fd, Buffer.byteLength(text));
      fs.futimesSync(fd, before.atime, before.mtime);
      fs.closeSync(fd);
    } else if (op === "remove") fs.rmSync(path);
    process.stdout.write("done\\n");
  });
  process.stdout.write("ready\\n");`;

let editor: ChildProcessWithoutNullStreams;
let answers: Interface;
let home: TempHome;
let sessions: string;
let indexPath: string;

beforeAll(async () => {
  editor = spawn(process.execPath, ["-e", EDITOR]);
  answers = createInterface({ input: editor.stdout });
  editor.on("exit", (code) => waiting?.(new Error(`the editor process ended (${code})`)));
  await next();
});
afterAll(() => {
  editor.stdin.end();
  answers.close();
});
beforeEach(() => {
  home?.cleanup();
  home = tempHome();
  sessions = join(home.dir, "sessions");
  indexPath = join(sessions, "index.json");
});

/** Fails the answer awaited, when the editor process ends. */
let waiting: ((err: Error) => void) | undefined;

function next(): Promise<string> {
  return new Promise((resolve, reject) => {
    waiting = reject;
    answers.once("line", resolve);
  });
}

/** Has the second process change the index, and waits until it did. */
async function edit(op: "replace" | "inPlace" | "remove", text = ""): Promise<void> {
  const done = next();
  editor.stdin.write(`${JSON.stringify({ op, path: indexPath, text })}\n`);
  expect(await done).toBe("done");
}

/** An index of one chat session each, every one the same length as the others. */
const indexOf = (...chats: string[]) =>
  `${JSON.stringify(
    {
      version: 1,
      sessions: Object.fromEntries(
        chats.map((chat) => [
          `telegram:${chat}`,
          { key: `telegram:${chat}`, file: `telegram/${chat}.jsonl` },
        ]),
      ),
    },
    null,
    2,
  )}\n`;

it("keeps the parse while the index is unchanged, and reads each change another process makes", async () => {
  home.write("sessions/index.json", indexOf("-101"));
  const store = new SessionStore(sessions);
  const first = store.get("telegram:-101");
  expect(first?.file).toBe("telegram/-101.jsonl");
  // Unchanged: the same parse, for this store and for the next one a mirrored delivery makes.
  expect(new SessionStore(sessions).get("telegram:-101")).toBe(first);

  await edit("replace", indexOf("-102"));
  expect(store.get("telegram:-101")).toBeUndefined();
  expect(store.get("telegram:-102")?.file).toBe("telegram/-102.jsonl");

  await edit("inPlace", indexOf("-103"));
  expect(store.get("telegram:-102")).toBeUndefined();
  expect(store.get("telegram:-103")?.file).toBe("telegram/-103.jsonl");

  await edit("remove");
  expect(store.get("telegram:-103")).toBeUndefined();

  await edit("replace", indexOf("-103"));
  expect(store.get("telegram:-103")?.file).toBe("telegram/-103.jsonl");
});

it("after its own locked write, reads the change another process makes next", async () => {
  const store = new SessionStore(sessions);
  const opened = await store.openChat("telegram", "-201");
  // Written on the session index's thread; the lookup here reads it, and stays right after others' changes.
  expect(store.get("telegram:-201")).toEqual(opened);
  await edit("inPlace", indexOf("-202"));
  expect(store.get("telegram:-201")).toBeUndefined();
  expect(store.get("telegram:-202")?.file).toBe("telegram/-202.jsonl");
  expect(await store.append("telegram:-202", [{ role: "assistant", content: "mirrored" }])).toBe(true);
  await edit("replace", indexOf("-203"));
  expect(store.get("telegram:-202")).toBeUndefined();
  expect(store.get("telegram:-203")?.file).toBe("telegram/-203.jsonl");
});

// With 10,000 sessions, parsing the index another process had changed held the gateway's event loop ~40–120 ms
// in a mirrored delivery's lookup (and a new chat's open() read, parsed and wrote it there): both now happen on
// the session index's thread. Watched here through JSON.parse, which every parse of the index goes through.
it("after another process's change, a mirrored delivery and a new chat's open() parse the index on the index's thread, not this one", async () => {
  home.write("sessions/index.json", indexOf("-401"));
  home.write("sessions/telegram/-401.jsonl", "");
  const store = new SessionStore(sessions);
  const parse = vi.spyOn(JSON, "parse");
  try {
    await edit("replace", indexOf("-401", "-402"));
    const mirror = { home: home.dir, profile: undefined, platform: "telegram", route: "alerts", text: "hi" };
    expect(await mirrorDelivery({ ...mirror, chatId: "-401" })).toBe(true);
    expect(await mirrorDelivery({ ...mirror, chatId: "-409" })).toBe(false);
    await edit("inPlace", indexOf("-401", "-403"));
    expect((await store.openChat("telegram", "-404")).file).toBe("telegram/-404.jsonl");
    const indexParsedHere = parse.mock.calls.filter(([text]) => String(text).includes('"sessions"'));
    expect(indexParsedHere).toEqual([]);
  } finally {
    parse.mockRestore();
  }
  expect(readFileSync(join(sessions, "telegram", "-401.jsonl"), "utf8")).toContain(
    "[Webhook delivery: alerts]",
  );
  expect(Object.keys(JSON.parse(readFileSync(indexPath, "utf8")).sessions)).toEqual([
    "telegram:-401",
    "telegram:-403",
    "telegram:-404",
  ]);
});

/** The sessions' keys of the index, read through `cache` as the store reads it. */
function keysThrough(cache: ReturnType<typeof parsedFileCache<string[]>>): string[] {
  return cache.read(indexPath, (bytes) => Object.keys(JSON.parse(bytes.toString("utf8")).sessions));
}

it("never answers from an index another process has since changed, its identity alone deciding", async () => {
  home.write("sessions/index.json", indexOf("-300"));
  // Reads dated a minute after the changes: no comparison of bytes, only the file's identity.
  const cache = parsedFileCache<string[]>({ now: () => Date.now() + 60_000 });
  const first = keysThrough(cache);
  expect(first).toEqual(["telegram:-300"]);
  expect(keysThrough(cache)).toBe(first);
  await edit("replace", indexOf("-301"));
  expect(keysThrough(cache)).toEqual(["telegram:-301"]);
  await edit("remove");
  expect(() => keysThrough(cache)).toThrow(expect.objectContaining({ code: "ENOENT" }));
  await edit("replace", indexOf("-302"));
  expect(keysThrough(cache)).toEqual(["telegram:-302"]);
  // Rewritten in place at the same size with its mtime set back, each as soon after the last lookup as a
  // round trip allows (within one timestamp tick, where coarse timestamps would not move).
  for (let i = 3; i <= 40; i++) {
    await edit("inPlace", indexOf(`-${300 + i}`));
    expect(keysThrough(cache)).toEqual([`telegram:-${300 + i}`]);
  }
  home.cleanup();
});
