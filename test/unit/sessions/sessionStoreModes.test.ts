import { chmodSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SessionStore } from "../../../src/io/sessions/store.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home?.cleanup());

describe("chat session transcripts: mode 0600", () => {
  it("a transcript that already existed wider (0644: made by hand or restored) is narrowed before payload text is appended", async () => {
    home = tempHome();
    const store = new SessionStore(join(home.dir, "sessions"));
    const record = await store.openChat("telegram", "-100123");
    const path = join(home.dir, "sessions", record.file);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    chmodSync(path, 0o644);
    expect(await store.append(record.key, [{ role: "assistant", content: "payload text" }])).toBe(true);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });
});
