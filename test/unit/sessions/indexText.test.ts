import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { SessionStore } from "../../../src/io/sessions/store.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home?.cleanup());

const NOW = new Date("2026-11-22T20:00:00.000Z");
const INDEX = JSON.stringify({
  version: 1,
  sessions: { "telegram:-1": { key: "telegram:-1", file: "telegram/-1.jsonl" } },
});

// index.json is written by the chat front end or by hand (the docs show one to write): an editor's byte
// order mark made the whole index "not a valid session index", and so did a file created empty.
it("an index written with a byte order mark is read; an empty one holds no sessions", async () => {
  home = tempHome();
  const indexPath = home.write("sessions/index.json", `\uFEFF${INDEX}`);
  home.write("sessions/telegram/-1.jsonl", "");
  const store = new SessionStore(join(home.dir, "sessions"), () => NOW);
  expect(await store.append("telegram:-1", [{ role: "assistant", content: "x" }])).toBe(true);
  expect(store.entries("telegram:-1").map((entry) => entry.content)).toEqual(["x"]);
  home.write("sessions/index.json", " \n");
  expect(store.get("telegram:-1")).toBeUndefined();
  expect(await store.append("telegram:-1", [{ role: "assistant", content: "y" }])).toBe(false);
  // Zeros a power cut left are not a new index to start: said as what they are.
  home.write("sessions/index.json", "\0".repeat(64));
  expect(() => store.get("telegram:-1")).toThrow(
    `${indexPath}: holds only zero bytes (64 bytes): its data never reached the disk (a power cut or a crash as it was written) — restore it from a backup, or move it aside to start a new one`,
  );
});
