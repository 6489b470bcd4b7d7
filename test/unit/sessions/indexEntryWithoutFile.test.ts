import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { mirrorDelivery } from "../../../src/io/sessions/mirror.js";
import { SessionStore } from "../../../src/io/sessions/store.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home?.cleanup());

const NOW = new Date("2026-11-22T20:00:00.000Z");

// index.json is written by the chat front end (or by hand): an entry without its "file" made every append
// to that chat fail with Node's `The "path" argument must be of type string. Received undefined`, naming
// neither the file, the entry nor what to add.
it("an index entry without a file is named (index file, key, field) and the other sessions are still written", async () => {
  home = tempHome();
  const index = {
    version: 1,
    sessions: {
      "telegram:-1": { key: "telegram:-1", platform: "telegram", chat_id: "-1" },
      "telegram:-2": { key: "telegram:-2", file: "telegram/-2.jsonl", platform: "telegram", chat_id: "-2" },
      "slack:C1": "slack/C1.jsonl",
    },
  };
  const indexPath = home.write("sessions/index.json", JSON.stringify(index));
  home.write("sessions/telegram/-2.jsonl", "");
  const store = new SessionStore(join(home.dir, "sessions"), () => NOW);
  const missing = `${indexPath}: session "telegram:-1" has no "file" (its transcript's path under ${join(home.dir, "sessions")}) — nothing written; add its "file", or remove the entry`;
  await expect(store.append("telegram:-1", [{ role: "assistant", content: "x" }])).rejects.toThrow(missing);
  expect(() => store.entries("telegram:-1")).toThrow(missing);
  await expect(
    mirrorDelivery(
      { home: home.dir, profile: undefined, platform: "telegram", chatId: "-1", route: "ci", text: "x" },
      () => NOW,
    ),
  ).rejects.toThrow(missing);
  await expect(store.append("slack:C1", [{ role: "assistant", content: "x" }])).rejects.toThrow(
    `${indexPath}: session "slack:C1" is not an entry of fields ("file", "platform", ...) but a string — nothing written; correct the entry, or remove it`,
  );
  // The rest of the index loads: the good session is written, and the bad entries are kept as they were.
  expect(await store.append("telegram:-2", [{ role: "assistant", content: "build done" }])).toBe(true);
  expect(store.entries("telegram:-2").map((entry) => entry.content)).toEqual(["build done"]);
  const after = JSON.parse(readFileSync(indexPath, "utf8"));
  expect(after.sessions["telegram:-1"]).toEqual(index.sessions["telegram:-1"]);
  expect(after.sessions["slack:C1"]).toBe("slack/C1.jsonl");
  expect(after.sessions["telegram:-2"].updated_at).toBe(NOW.toISOString());
});
