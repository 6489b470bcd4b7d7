import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { SessionStore } from "../../../src/io/sessions/store.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home?.cleanup());

const NOW = new Date("2026-11-22T20:00:00.000Z");

function storeWith(file: string): SessionStore {
  const index = {
    version: 1,
    sessions: { "telegram:-1": { key: "telegram:-1", file, platform: "telegram", chat_id: "-1" } },
  };
  home.write("sessions/index.json", JSON.stringify(index));
  return new SessionStore(join(home.dir, "sessions"), () => NOW);
}

// A named pipe in a transcript's place opened (read-write, so without a reader too) and took each mirrored
// entry into its buffer: once that held 64 KiB, the next append's write blocked the gateway's one thread
// for good. A directory there failed with a bare EISDIR.
it("a transcript that is a named pipe or a directory is not written: the append fails naming it and the fix", async () => {
  home = tempHome();
  const store = storeWith("telegram/-1.jsonl");
  const transcript = join(home.dir, "sessions", "telegram", "-1.jsonl");
  mkdirSync(join(home.dir, "sessions", "telegram"));
  execFileSync("mkfifo", [transcript]);
  const notAFile = (kind: string) =>
    `${transcript}: ${kind}, not a file — svc appends a session's transcript only to a regular file, nothing written: move it away (the next entry then starts a new transcript there)`;
  await expect(store.append("telegram:-1", [{ role: "assistant", content: "x" }])).rejects.toThrow(
    notAFile("a named pipe"),
  );
  execFileSync("rm", [transcript]);
  mkdirSync(transcript);
  await expect(store.append("telegram:-1", [{ role: "assistant", content: "x" }])).rejects.toThrow(
    notAFile("a directory"),
  );
  // Moved away: the transcript is a file again and the entry goes in.
  execFileSync("rmdir", [transcript]);
  expect(await store.append("telegram:-1", [{ role: "assistant", content: "x" }])).toBe(true);
  expect(store.entries("telegram:-1").map((entry) => entry.content)).toEqual(["x"]);
});

// index.json was read with a blocking readFileSync: a named pipe in its place (no writer) held the gateway's
// one thread at the first mirror to any chat of the profile, for good.
it("an index.json that is a named pipe is refused, named, without waiting for a writer", async () => {
  home = tempHome();
  mkdirSync(join(home.dir, "sessions"));
  const indexPath = join(home.dir, "sessions", "index.json");
  execFileSync("mkfifo", [indexPath]);
  const store = new SessionStore(join(home.dir, "sessions"), () => NOW);
  expect(() => store.get("telegram:-1")).toThrow(
    `${indexPath}: is not a regular file (a named pipe) — the session index is a file the chat front end (or svc) replaces as a whole: remove it, or put the file back in its place`,
  );
});
