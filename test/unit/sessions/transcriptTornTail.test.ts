import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SessionStore } from "../../../src/io/sessions/store.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home?.cleanup());

/**
 * A transcript whose last line has no line break — zeros a power cut left, an entry another tool or a hand
 * edit wrote without one — had the next entry glued to it, so that entry was unreadable too.
 */
describe("a chat transcript that does not end with a line break", () => {
  it.each([
    ["zeros a power cut left after its last entry", Buffer.alloc(64)],
    ["an entry another tool wrote without one", Buffer.from('{"role":"user","content":"by hand","at":"x"}')],
  ])("gets one before the next entry (%s), so that entry is a line of its own", async (_, tail) => {
    home = tempHome();
    const store = new SessionStore(join(home.dir, "sessions"));
    const record = await store.openChat("telegram", "-100123");
    const path = join(home.dir, "sessions", record.file);
    await store.append(record.key, [{ role: "assistant", content: "first" }]);
    appendFileSync(path, tail);
    await store.append(record.key, [{ role: "assistant", content: "second" }]);
    const lines = readFileSync(path, "utf8").split("\n");
    expect(lines.at(-1)).toBe("");
    expect(JSON.parse(lines.at(-2) as string)).toMatchObject({ role: "assistant", content: "second" });
    expect(JSON.parse(lines[0] as string)).toMatchObject({ content: "first" });
  });
});
