import { describe, expect, it, vi } from "vitest";
import { StdioTransport } from "../../../src/io/mcp/stdioTransport.js";
import { alive } from "../../helpers/process.js";

describe("StdioTransport", () => {
  it("a line over the message limit closes the connection at once, saying why, instead of buffering on", async () => {
    const reasons: string[] = [];
    let closed = false;
    const transport = new StdioTransport({
      command: process.execPath,
      args: ["-e", "process.stdout.write('x'.repeat(4096)); setInterval(() => {}, 1000)"],
      env: { PATH: process.env.PATH ?? "" },
      maxMessageBytes: 1024,
      onProtocolError: (reason) => reasons.push(reason),
    });
    transport.onclose = () => {
      closed = true;
    };
    await transport.start();
    const pid = transport.pid as number;
    await vi.waitFor(() => expect(closed).toBe(true), { timeout: 3000, interval: 20 });
    expect(reasons).toEqual([expect.stringContaining("the server wrote a message of more than")]);
    expect(alive(pid)).toBe(false);
  });

  it("the limit is exact: a whole line of exactly the limit is delivered, one byte longer closes, in one chunk too", async () => {
    const messages: unknown[] = [];
    const reasons: string[] = [];
    let closed = false;
    // Two JSON-RPC messages of 1024 and 1025 bytes, written in one chunk with their newlines.
    const script = `const m = (n) => { const head = JSON.stringify({ jsonrpc: "2.0", method: "a", params: { p: "" } }); return JSON.stringify({ jsonrpc: "2.0", method: "a", params: { p: "x".repeat(n - head.length) } }); }; process.stdout.write(m(1024) + "\\n" + m(1025) + "\\n"); setInterval(() => {}, 1000)`;
    const transport = new StdioTransport({
      command: process.execPath,
      args: ["-e", script],
      env: { PATH: process.env.PATH ?? "" },
      maxMessageBytes: 1024,
      onProtocolError: (reason) => reasons.push(reason),
    });
    transport.onmessage = (m) => messages.push(m);
    transport.onclose = () => {
      closed = true;
    };
    await transport.start();
    await vi.waitFor(() => expect(closed).toBe(true), { timeout: 3000, interval: 20 });
    expect(messages).toHaveLength(1);
    expect(JSON.stringify(messages[0])).toHaveLength(1024);
    expect(reasons).toEqual([expect.stringContaining("the server wrote a message of more than")]);
  });

  it("skips lines that are not JSON-RPC and delivers the messages around them (a BOM before one too)", async () => {
    const messages: unknown[] = [];
    const errors: Error[] = [];
    const transport = new StdioTransport({
      command: process.execPath,
      args: [
        "-e",
        'process.stdout.write("banner\\n{bad json\\n\\uFEFF" + JSON.stringify({jsonrpc:"2.0",method:"a"}) + "\\r\\n\\n" + JSON.stringify({jsonrpc:"2.0",method:"b"}).slice(0,10)); setTimeout(() => process.stdout.write(JSON.stringify({jsonrpc:"2.0",method:"b"}).slice(10) + "\\n"), 50)',
      ],
      env: { PATH: process.env.PATH ?? "" },
    });
    transport.onmessage = (m) => messages.push(m);
    transport.onerror = (e) => errors.push(e);
    await transport.start();
    await vi.waitFor(() => expect(messages).toHaveLength(2), { timeout: 3000, interval: 20 });
    expect(messages).toEqual([
      { jsonrpc: "2.0", method: "a" },
      { jsonrpc: "2.0", method: "b" },
    ]);
    expect(errors).toHaveLength(2);
    await transport.close();
  });

  it("a second close (a stop during a recycle) resolves only once the process is gone", async () => {
    const transport = new StdioTransport({
      command: process.execPath,
      args: ["-e", "setInterval(() => {}, 1000)"],
      env: { PATH: process.env.PATH ?? "" },
    });
    await transport.start();
    const pid = transport.pid as number;
    const first = transport.close();
    await transport.close();
    expect(alive(pid)).toBe(false);
    await first;
  });
});
