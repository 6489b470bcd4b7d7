import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fileTools } from "../../../src/agent/tools/file.js";
import { createWorkspace } from "../../../src/agent/tools/index.js";
import type { AgentTool } from "../../../src/agent/tools/tool.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { outcomeText, toolContext } from "../../helpers/toolContext.js";

let home: TempHome;
let workspace: string;
let fileRead: AgentTool;
beforeEach(async () => {
  home = tempHome();
  workspace = await createWorkspace(home.dir, "d-1");
  fileRead = fileTools({ max_bytes: 100 }).find((tool) => tool.name === "file_read") as AgentTool;
});
afterEach(() => home.cleanup());

const read = async (name: string, bytes: Buffer) => {
  writeFileSync(join(workspace, name), bytes);
  return fileRead.execute({ path: name }, toolContext({ workspace: async () => workspace }));
};
const utf16be = (text: string) => Buffer.from(text, "utf16le").swap16();

describe("file_read: text in the encodings a command or an editor writes", () => {
  it("reads UTF-16 text by its byte order mark (what PowerShell's > writes), not as a binary file", async () => {
    expect(outcomeText(await read("le.txt", Buffer.from("\ufeffcafé ✓\n", "utf16le")))).toBe(
      "café ✓\n\n[the file is UTF-16LE text (its byte order mark), shown decoded]",
    );
    expect(outcomeText(await read("be.txt", utf16be("\ufeffcafé\n")))).toBe(
      "café\n\n[the file is UTF-16BE text (its byte order mark), shown decoded]",
    );
    // A whole file's odd last byte is not hidden: it shows as U+FFFD.
    const odd = Buffer.concat([Buffer.from("\ufeffhi", "utf16le"), Buffer.from([0x41])]);
    expect(outcomeText(await read("odd.txt", odd))).toBe(
      "hi\ufffd\n[the file is UTF-16LE text (its byte order mark), shown decoded]",
    );
  });

  it("cuts UTF-16 text at max_bytes on a whole character (an emoji's surrogate pair kept whole or left out)", async () => {
    // BOM (2 bytes) + 48 "a" (96 bytes) + an emoji (4 bytes) + more: the emoji straddles the 100-byte cap.
    const text = outcomeText(await read("cut.txt", Buffer.from(`\ufeff${"a".repeat(48)}😀bbbb`, "utf16le")));
    expect(text).toBe(
      `${"a".repeat(48)}\n[truncated: file is 110 bytes, shown 98]\n[the file is UTF-16LE text (its byte order mark), shown decoded]`,
    );
  });

  it("leaves a UTF-8 byte order mark out of the text", async () => {
    expect(outcomeText(await read("bom.txt", Buffer.from("\ufeffhello", "utf8")))).toBe("hello");
  });

  it("says a file is not UTF-8 (naming its first such line) rather than passing U+FFFD off as its text", async () => {
    const latin1 = Buffer.from("ok\ncaf\xe9\n", "latin1");
    expect(outcomeText(await read("latin1.txt", latin1))).toBe(
      "ok\ncaf\ufffd\n\n[line 2 is not UTF-8 text: bytes that are not UTF-8 are shown as \ufffd (another encoding, such as Latin-1?)]",
    );
  });

  it("still refuses a binary file, with or without something that looks like a byte order mark", async () => {
    expect(await read("a.bin", Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 1]))).toEqual({
      ok: false,
      error: 'file_read: "a.bin" is a binary file (7 bytes)',
    });
    expect(await read("b.bin", Buffer.from([0xff, 0xfe, 0, 0, 0, 0]))).toEqual({
      ok: false,
      error: 'file_read: "b.bin" is a binary file (6 bytes)',
    });
  });
});
