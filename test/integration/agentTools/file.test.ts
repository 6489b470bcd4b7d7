import { mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fileTools } from "../../../src/agent/tools/file.js";
import { createWorkspace } from "../../../src/agent/tools/index.js";
import type { AgentTool } from "../../../src/agent/tools/tool.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { outcomeText, toolContext } from "../../helpers/toolContext.js";

let home: TempHome;
let workspace: string;
let outside: string;
let tools: Record<string, AgentTool>;
beforeEach(async () => {
  home = tempHome();
  workspace = await createWorkspace(home.dir, "d-1");
  outside = home.write("outside/secret.txt", "top secret");
  tools = Object.fromEntries(fileTools({ max_bytes: 100 }).map((tool) => [tool.name, tool]));
});
afterEach(() => home.cleanup());

const call = (name: string, args: unknown) =>
  (tools[name] as AgentTool).execute(args, toolContext({ workspace: async () => workspace }));

describe("file tools: read, write and list inside the run's workspace", () => {
  it("writes (creating parents), reads back and lists", async () => {
    expect(outcomeText(await call("file_write", { path: "notes/today.md", content: "hello" }))).toBe(
      "wrote 5 bytes to notes/today.md",
    );
    expect(readFileSync(join(workspace, "notes/today.md"), "utf8")).toBe("hello");
    expect(statSync(join(workspace, "notes/today.md")).mode & 0o777).toBe(0o600);
    expect(outcomeText(await call("file_read", { path: "notes/today.md" }))).toBe("hello");
    await call("file_write", { path: "a.txt", content: "abc" });
    expect(outcomeText(await call("file_list", {}))).toBe("a.txt  (3 bytes)\nnotes/");
    expect(outcomeText(await call("file_list", { path: "notes" }))).toBe("today.md  (5 bytes)");
  });

  it.each([
    ["../outside/secret.txt", '".." — paths must stay inside'],
    ["notes/../../x", '".."'],
    ["/etc/passwd", "is absolute"],
  ])("refuses the path %s", async (path, message) => {
    for (const name of ["file_read", "file_write", "file_list"]) {
      const outcome = await call(name, { path, content: "x" });
      expect(outcome).toMatchObject({ ok: false, error: expect.stringContaining(message) });
    }
  });

  it("refuses symlinks that lead outside, for reading, listing and writing through them", async () => {
    symlinkSync(outside, join(workspace, "link.txt"));
    symlinkSync(join(home.dir, "outside"), join(workspace, "dir"));
    expect(await call("file_read", { path: "link.txt" })).toMatchObject({
      ok: false,
      error: expect.stringContaining("leads outside the workspace"),
    });
    expect(await call("file_list", { path: "dir" })).toMatchObject({ ok: false });
    expect(await call("file_write", { path: "dir/new.txt", content: "x" })).toMatchObject({
      ok: false,
      error: expect.stringContaining("leads outside the workspace"),
    });
    // Writing to the link's own name replaces the link, never the file it points to.
    await call("file_write", { path: "link.txt", content: "mine" });
    expect(readFileSync(outside, "utf8")).toBe("top secret");
    expect(readFileSync(join(workspace, "link.txt"), "utf8")).toBe("mine");
  });

  it("file_list of a file says it is a file", async () => {
    await call("file_write", { path: "notes.md", content: "x" });
    expect(await call("file_list", { path: "notes.md" })).toEqual({
      ok: false,
      error: 'file_list: "notes.md" is a file, not a directory — read it with file_read',
    });
  });

  it("says a file is empty (or blank) rather than answering nothing", async () => {
    await call("file_write", { path: "empty.txt", content: "" });
    await call("file_write", { path: "blank.txt", content: " \n\n" });
    expect(outcomeText(await call("file_read", { path: "empty.txt" }))).toBe("(the file is empty)");
    expect(outcomeText(await call("file_read", { path: "blank.txt" }))).toBe(
      "(the file holds only whitespace: 3 bytes)",
    );
  });

  it("writes a file whose name is near the 255-byte limit", async () => {
    const name = `${"n".repeat(240)}.txt`;
    expect(outcomeText(await call("file_write", { path: name, content: "long" }))).toBe(
      `wrote 4 bytes to ${name}`,
    );
    expect(readFileSync(join(workspace, name), "utf8")).toBe("long");
  });

  it("refuses to write a name with a line break or another control character, and lists one a command made quoted", async () => {
    expect(await call("file_write", { path: "a\nb.txt  (3 bytes)", content: "x" })).toEqual({
      ok: false,
      error:
        'file_write: "a\\nb.txt  (3 bytes)" holds a control character (U+000A) — name files without line breaks or control characters',
    });
    expect(await call("file_write", { path: "dir\u001b[2J/x", content: "x" })).toMatchObject({
      ok: false,
      error: expect.stringContaining("(U+001B)"),
    });
    expect(readdirSync(workspace)).toEqual([]);
    // A name a command (terminal) wrote cannot pass for other entries or end the listing early.
    writeFileSync(join(workspace, "a\nb.txt  (3 bytes)"), "x");
    writeFileSync(join(workspace, "plain.txt"), "yz");
    expect(outcomeText(await call("file_list", {}))).toBe(
      '"a\\nb.txt  (3 bytes)"  (1 bytes)\nplain.txt  (2 bytes)',
    );
    expect(outcomeText(await call("file_read", { path: "a\nb.txt  (3 bytes)" }))).toBe("x");
  });

  it("refuses a name longer than a file name may be before creating anything", async () => {
    const long = "n".repeat(256);
    expect(await call("file_write", { path: `a/b/${long}/c.txt`, content: "x" })).toEqual({
      ok: false,
      error: `file_write: "a/b/${long}/c.txt": the name "${long.slice(0, 40)}…" is 256 bytes; a file or directory name may have at most 255`,
    });
    expect(readdirSync(workspace)).toEqual([]);
  });

  it("allows symlinks that stay inside", async () => {
    mkdirSync(join(workspace, "real"));
    writeFileSync(join(workspace, "real/f.txt"), "in");
    symlinkSync(join(workspace, "real"), join(workspace, "alias"));
    expect(outcomeText(await call("file_read", { path: "alias/f.txt" }))).toBe("in");
  });

  it("caps what it reads and what it accepts at max_bytes", async () => {
    writeFileSync(join(workspace, "big.txt"), "x".repeat(150));
    expect(outcomeText(await call("file_read", { path: "big.txt" }))).toBe(
      `${"x".repeat(100)}\n[truncated: file is 150 bytes, shown 100]`,
    );
    // A cut through a two-byte character ends before it, and says how much was shown.
    writeFileSync(join(workspace, "accents.txt"), `a${"é".repeat(60)}`);
    expect(outcomeText(await call("file_read", { path: "accents.txt" }))).toBe(
      `a${"é".repeat(49)}\n[truncated: file is 121 bytes, shown 99]`,
    );
    expect(await call("file_write", { path: "w.txt", content: "y".repeat(101) })).toEqual({
      ok: false,
      error: "file_write: content is 101 bytes; the most file_write accepts is 100",
    });
  });

  it("answers a tool error when the run has no workspace", async () => {
    const outcome = await (tools.file_list as AgentTool).execute({}, toolContext());
    expect(outcome).toEqual({
      ok: false,
      error: "file_list: this run has no working directory: this test gives the run no workspace",
    });
  });

  it("says what is missing or wrong", async () => {
    expect(await call("file_read", { path: "nope.txt" })).toEqual({
      ok: false,
      error: 'file_read: "nope.txt" does not exist',
    });
    writeFileSync(join(workspace, "bin"), Buffer.from([1, 0, 2]));
    expect(await call("file_read", { path: "bin" })).toMatchObject({
      error: expect.stringContaining("binary"),
    });
  });
});
