import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { SessionStore } from "../../../src/io/sessions/store.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home?.cleanup());

const NOW = new Date("2026-11-22T20:00:00.000Z");

// sessions/index.json belongs to the chat front end too: svc rewrites it for its own keys (a session's
// `updated_at`, a session it adds), and JSON.parse turned another front end's 64-bit id 9007199254740993 into
// 9007199254740992 (and `1.0` into `1`) when the file was written back.
it("numbers of fields svc does not own are written back as they were, however large", async () => {
  home = tempHome();
  const indexPath = home.write(
    "sessions/index.json",
    `{"version": 1, "front_end": {"cursor": 12345678901234567890, "ratio": 1.0, "exp": 1e3},
     "sessions": {"telegram:-1": {"key": "telegram:-1", "file": "telegram/-1.jsonl", "message_id": 9007199254740993,
       "20": "digit key", "10": "written after"}}}`,
  );
  home.write("sessions/telegram/-1.jsonl", "");
  const store = new SessionStore(join(home.dir, "sessions"), () => NOW);
  expect(await store.append("telegram:-1", [{ role: "assistant", content: "x" }])).toBe(true);
  await store.openChat("telegram", "-2");
  const text = readFileSync(indexPath, "utf8");
  expect(text).toContain('"cursor": 12345678901234567890');
  expect(text).toContain('"ratio": 1.0');
  expect(text).toContain('"exp": 1e3');
  expect(text).toContain('"message_id": 9007199254740993');
  // The record's keys in the order they were written, svc's new one after them.
  expect(text.indexOf('"20"')).toBeLessThan(text.indexOf('"10"'));
  expect(text.indexOf('"10"')).toBeLessThan(text.indexOf('"updated_at"'));
  expect(store.get("telegram:-1")?.updated_at).toBe(NOW.toISOString());
  expect(store.get("telegram:-2")?.file).toBe("telegram/-2.jsonl");
});
