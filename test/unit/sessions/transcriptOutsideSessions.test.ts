import { existsSync, mkdirSync, readFileSync, statSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { SessionStore } from "../../../src/io/sessions/store.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home?.cleanup());

// index.json is written by the chat front end that shares the directory: a session whose `file` climbed out
// of sessions/ had the mirrored payload text appended there, and the file narrowed to 0600, wherever it was.
it("a session whose index entry names a file outside sessions/ (../) is not written: the append fails naming the entry and the fix", async () => {
  home = tempHome();
  const outside = home.write("notes.txt", "kept as it is\n", 0o644);
  const index = {
    version: 1,
    sessions: {
      "telegram:-1": { key: "telegram:-1", file: "../notes.txt", platform: "telegram", chat_id: "-1" },
    },
  };
  home.write("sessions/index.json", JSON.stringify(index));
  const store = new SessionStore(join(home.dir, "sessions"));
  await expect(store.append("telegram:-1", [{ role: "assistant", content: "payload text" }])).rejects.toThrow(
    `${join(home.dir, "sessions", "index.json")}: session "telegram:-1" names the transcript "../notes.txt", which is outside ${join(home.dir, "sessions")} — nothing written; correct its "file" (a path under that directory)`,
  );
  expect(readFileSync(outside, "utf8")).toBe("kept as it is\n");
  expect(statSync(outside).mode & 0o777).toBe(0o644);
  expect(() => store.entries("telegram:-1")).toThrow("outside");
  // A path under sessions/ is used as it is, a leading / included (it is read under the directory).
  index.sessions["telegram:-1"].file = "/telegram/-1.jsonl";
  home.write("sessions/index.json", JSON.stringify(index));
  home.write("sessions/telegram/-1.jsonl", "");
  expect(await store.append("telegram:-1", [{ role: "assistant", content: "payload text" }])).toBe(true);
  expect(store.entries("telegram:-1")).toHaveLength(1);
  expect(existsSync(join(home.dir, "telegram"))).toBe(false);
});

it("a transcript that is a symbolic link (to a file elsewhere) is not appended to through it, nor is its target's mode changed", async () => {
  home = tempHome();
  const outside = home.write("notes.txt", "kept as it is\n", 0o644);
  const store = new SessionStore(join(home.dir, "sessions"));
  const index = {
    version: 1,
    sessions: { "slack:C1": { key: "slack:C1", file: "slack/C1.jsonl", platform: "slack", chat_id: "C1" } },
  };
  home.write("sessions/index.json", JSON.stringify(index));
  mkdirSync(join(home.dir, "sessions", "slack"));
  symlinkSync(outside, join(home.dir, "sessions", "slack", "C1.jsonl"));
  await expect(store.append("slack:C1", [{ role: "assistant", content: "payload text" }])).rejects.toThrow(
    `${join(home.dir, "sessions", "slack", "C1.jsonl")}: a symbolic link — svc appends a session's transcript only to a file of its own there, nothing written: replace the link with the file it points to`,
  );
  expect(readFileSync(outside, "utf8")).toBe("kept as it is\n");
  expect(statSync(outside).mode & 0o777).toBe(0o644);
});
