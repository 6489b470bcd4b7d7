import { describe, expect, it, vi } from "vitest";
import { createTransport } from "../../../src/io/mcp/transport.js";
import { entry } from "./harness.js";

const LIMIT = 64 * 1024;

describe("a stdio server's stderr lines", () => {
  it("each line longer than 64 KiB is cut, whether it comes in one chunk or in several", async () => {
    const script = [
      "const w = (s) => new Promise((r) => process.stderr.write(s, r));",
      "const pause = () => new Promise((r) => setTimeout(r, 30));",
      "(async () => {",
      // One whole line of 120,000 characters, then a short one, in one write.
      "  await w('a'.repeat(120000) + '\\nshort\\n');",
      "  await pause();",
      // One line spread over three writes, then the end of it and a line after it.
      "  for (let i = 0; i < 3; i++) { await w('b'.repeat(50000)); await pause(); }",
      "  await w('bbb\\nafter\\n');",
      "  setInterval(() => {}, 1000);",
      "})();",
    ].join("\n");
    const lines: string[] = [];
    const transport = createTransport(entry({ command: process.execPath, args: ["-e", script] }), {
      onStderr: (line) => lines.push(line),
    });
    await transport.start();
    try {
      await vi.waitFor(() => expect(lines.at(-1)).toBe("after"), { timeout: 5000, interval: 20 });
      expect(lines).toEqual([`${"a".repeat(LIMIT)}…`, "short", `${"b".repeat(LIMIT)}…`, "after"]);
    } finally {
      await transport.close();
    }
  });

  it("a last line without a newline (a server that writes why and exits) is reported, and CRLF loses its CR", async () => {
    const script = "process.stderr.write('warn: slow\\r\\nfatal: API_KEY missing', () => process.exit(2))";
    const lines: string[] = [];
    const transport = createTransport(entry({ command: process.execPath, args: ["-e", script] }), {
      onStderr: (line) => lines.push(line),
    });
    let closed = false;
    transport.onclose = () => {
      closed = true;
    };
    await transport.start();
    try {
      await vi.waitFor(() => expect(closed).toBe(true), { timeout: 5000, interval: 20 });
      await vi.waitFor(() => expect(lines).toEqual(["warn: slow", "fatal: API_KEY missing"]), {
        timeout: 10_000,
        interval: 10,
      });
    } finally {
      await transport.close();
    }
  });
});
