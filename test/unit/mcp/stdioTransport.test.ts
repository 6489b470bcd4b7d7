import { describe, expect, it, vi } from "vitest";
import { scrub } from "../../../src/io/credentials.js";
import { gluedAnswer, StdioTransport } from "../../../src/io/mcp/stdioTransport.js";
import { stderrLines } from "../../../src/io/mcp/transport.js";
import { alive, signalProcess } from "../../helpers/process.js";

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
    await vi.waitFor(() => expect(closed).toBe(true), { timeout: 10_000, interval: 20 });
    expect(reasons).toEqual([expect.stringContaining("the server wrote a message of more than")]);
    expect(alive(pid)).toBe(false);
  });

  it("a process that closes its stdout and runs on is closed, saying why, instead of leaving calls to time out", async () => {
    const reasons: string[] = [];
    let closed = false;
    const transport = new StdioTransport({
      command: process.execPath,
      args: ["-e", "require('fs').closeSync(1); setInterval(() => {}, 1000)"],
      env: { PATH: process.env.PATH ?? "" },
      stdoutEndGraceMs: 50,
      onProtocolError: (reason) => reasons.push(reason),
    });
    transport.onclose = () => {
      closed = true;
    };
    await transport.start();
    const pid = transport.pid as number;
    try {
      await vi.waitFor(() => expect(closed).toBe(true), { timeout: 10_000, interval: 20 });
      expect(reasons).toEqual([
        "the server process closed its stdout but kept running, so it could answer nothing more; svc stopped it",
      ]);
      expect(alive(pid)).toBe(false);
    } finally {
      if (alive(pid)) signalProcess(pid, "SIGKILL");
    }
  });

  it("a process that closes its stdin and runs on is closed at svc's next message, saying why, instead of leaving calls to time out", async () => {
    const reasons: string[] = [];
    let closed = false;
    const transport = new StdioTransport({
      command: process.execPath,
      args: [
        "-e",
        "require('fs').closeSync(0); process.stdout.write('closed\\n'); setInterval(() => {}, 1000)",
      ],
      env: { PATH: process.env.PATH ?? "" },
      stdoutEndGraceMs: 50,
      onProtocolError: (reason) => reasons.push(reason),
      onOtherOutput: () => {
        // Its stdin is closed now: svc's next message finds no reader.
        void transport.send({ jsonrpc: "2.0", id: 1, method: "ping" }).catch(() => undefined);
      },
    });
    transport.onerror = () => undefined;
    transport.onclose = () => {
      closed = true;
    };
    await transport.start();
    const pid = transport.pid as number;
    try {
      await vi.waitFor(() => expect(closed).toBe(true), { timeout: 10_000, interval: 20 });
      expect(reasons).toEqual([
        "the server process closed its stdin but kept running, so it could take no more requests; svc stopped it",
      ]);
      expect(alive(pid)).toBe(false);
    } finally {
      if (alive(pid)) signalProcess(pid, "SIGKILL");
    }
  });

  it("a process that exits (its stdout ending with it) is not said to have closed its stdout", async () => {
    const reasons: string[] = [];
    let closed = false;
    const transport = new StdioTransport({
      command: process.execPath,
      args: ["-e", "process.exitCode = 3"],
      env: { PATH: process.env.PATH ?? "" },
      stdoutEndGraceMs: 50,
      onProtocolError: (reason) => reasons.push(reason),
    });
    transport.onclose = () => {
      closed = true;
    };
    await transport.start();
    await vi.waitFor(() => expect(closed).toBe(true), { timeout: 10_000, interval: 20 });
    await new Promise((resolve) => setImmediate(resolve));
    expect(reasons).toEqual([]);
  });

  it("a last stdout line without its newline, written before the process exits, is reported too", async () => {
    const other: string[] = [];
    let closed = false;
    const transport = new StdioTransport({
      command: process.execPath,
      args: ["-e", "process.stdout.write('banner\\nUsage: tool <serve|mcp>', () => process.exit(64))"],
      env: { PATH: process.env.PATH ?? "" },
      onOtherOutput: (line) => other.push(line),
    });
    transport.onclose = () => {
      closed = true;
    };
    await transport.start();
    await vi.waitFor(() => expect(closed).toBe(true), { timeout: 10_000, interval: 20 });
    expect(other).toEqual(["banner", "Usage: tool <serve|mcp>"]);
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
    await vi.waitFor(() => expect(closed).toBe(true), { timeout: 10_000, interval: 20 });
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
    await vi.waitFor(() => expect(messages).toHaveLength(2), { timeout: 10_000, interval: 20 });
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

/**
 * A server's end once svc closes its stdin, as a well-behaved one ends: the close is then over at once, not
 * after the grace period a server that runs on gets (2 s) before its SIGTERM.
 */
const ENDS_WITH_STDIN = 'process.stdin.on("end", () => process.exit(0)); process.stdin.resume()';

describe("StdioTransport: an answer that is not valid JSON-RPC", () => {
  it("is delivered as an error answer to its request saying why, not skipped (its call waited out its timeout)", async () => {
    const answers = [
      { jsonrpc: "2.0", id: 1, error: { code: -32000 } },
      { jsonrpc: "2.0", id: 2, error: { code: "E_FAIL", message: "failed" } },
      { jsonrpc: "2.0", id: "3", error: "boom" },
      { jsonrpc: "2.0", id: 4, result: "ok" },
      { id: 5, result: { content: [] } },
      { jsonrpc: "2.0", id: 6 },
      { jsonrpc: "2.0", method: "notifications/message", params: "not an object" },
      { jsonrpc: "2.0", id: null, error: { code: -32700 } },
      // `_meta` written as null (pydantic's model_dump()): read as left out.
      { jsonrpc: "2.0", id: 9, result: { content: [], _meta: null } },
      { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "d", _meta: null } },
      { jsonrpc: "2.0", id: 10, result: { content: [], _meta: "x" } },
    ];
    const messages: unknown[] = [];
    const errors: Error[] = [];
    const transport = new StdioTransport({
      command: process.execPath,
      args: [
        "-e",
        `process.stdout.write(${JSON.stringify(answers.map((a) => JSON.stringify(a)).join("\n"))} + "\\n"); ${ENDS_WITH_STDIN}`,
      ],
      env: { PATH: process.env.PATH ?? "" },
    });
    transport.onmessage = (m) => messages.push(m);
    transport.onerror = (e) => errors.push(e);
    await transport.start();
    await vi.waitFor(() => expect(messages.length + errors.length).toBe(answers.length), {
      timeout: 10_000,
      interval: 20,
    });
    await transport.close();
    expect(messages).toEqual([
      {
        jsonrpc: "2.0",
        id: 1,
        error: {
          code: -32000,
          message: 'the server answered with an error without a message: {"code":-32000}',
        },
      },
      {
        jsonrpc: "2.0",
        id: 2,
        error: { code: -32603, message: 'failed (its error code "E_FAIL" is not a JSON-RPC integer code)' },
      },
      {
        jsonrpc: "2.0",
        id: "3",
        error: { code: -32603, message: 'the server answered with an error svc cannot read: "boom"' },
      },
      {
        jsonrpc: "2.0",
        id: 4,
        error: { code: -32603, message: 'the server\'s answer has a result that is not a JSON object: "ok"' },
      },
      {
        jsonrpc: "2.0",
        id: 5,
        error: {
          code: -32603,
          message: 'the server\'s answer is not JSON-RPC 2.0 (no jsonrpc, where "jsonrpc": "2.0" belongs)',
        },
      },
      {
        jsonrpc: "2.0",
        id: 6,
        error: {
          code: -32603,
          message: 'the server\'s answer holds neither a result nor an error: {"jsonrpc":"2.0","id":6}',
        },
      },
      { jsonrpc: "2.0", id: 9, result: { content: [] } },
      { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "d" } },
      {
        jsonrpc: "2.0",
        id: 10,
        error: {
          code: -32603,
          message: 'the server\'s answer has a result whose _meta is not a JSON object: "x"',
        },
      },
    ]);
    // A notification or an answer without an id stays skipped (no call waits for it).
    expect(errors).toHaveLength(2);
  });
});

describe("StdioTransport: a JSON-RPC batch", () => {
  it("delivers each message of a line holding an array (a 2025-03-26 server may batch), not skipping the line", async () => {
    const batch = [
      { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "batched" } },
      { jsonrpc: "2.0", id: 7, result: { content: [] } },
      { jsonrpc: "2.0", id: 8, error: { code: -32000 } },
    ];
    const messages: unknown[] = [];
    const transport = new StdioTransport({
      command: process.execPath,
      args: [
        "-e",
        `process.stdout.write(${JSON.stringify(JSON.stringify(batch))} + "\\n"); ${ENDS_WITH_STDIN}`,
      ],
      env: { PATH: process.env.PATH ?? "" },
    });
    transport.onmessage = (m) => messages.push(m);
    await transport.start();
    await vi.waitFor(() => expect(messages).toHaveLength(3), { timeout: 10_000, interval: 20 });
    await transport.close();
    expect(messages).toEqual([
      batch[0],
      batch[1],
      {
        jsonrpc: "2.0",
        id: 8,
        error: {
          code: -32000,
          message: 'the server answered with an error without a message: {"code":-32000}',
        },
      },
    ]);
  });
});

describe("gluedAnswer: an answer sharing its line with text written before it without a line break", () => {
  const answer = { jsonrpc: "2.0", id: 1, result: { ok: true } };
  it("takes the answer after a terminal escape or a banner, and names the text before it", () => {
    expect(gluedAnswer(`\u001b[?25l${JSON.stringify(answer)}`)).toEqual({
      before: "\u001b[?25l",
      message: answer,
    });
    expect(gluedAnswer(`Server {v1} ready: ${JSON.stringify(answer)}`)).toEqual({
      before: "Server {v1} ready: ",
      message: answer,
    });
  });

  it("never a request or notification a log line quotes, nor JSON that is no JSON-RPC answer", () => {
    const request = { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "x" } };
    expect(gluedAnswer(`received ${JSON.stringify(request)}`)).toBeUndefined();
    expect(gluedAnswer('status {"id": 1, "result": "ok"}')).toBeUndefined();
    expect(gluedAnswer("Starting server v1.0")).toBeUndefined();
  });
});

describe("what a stdio server writes, cut for a message: its credentials redacted before the cut", () => {
  // A credential holding a delimiter: a redaction after the cut no longer recognizes the start kept.
  const SECRET = "pw12345678:SECRETtail99";
  const redact = (text: string) => scrub(text, [SECRET]);

  it("a stdout line that is no message (cut at 1,000 characters) and a line not ended yet (at 300)", async () => {
    const other: string[] = [];
    const unfinished: string[] = [];
    // The line's character 1,000, and the unfinished line's 300, fall after the credential's colon.
    const script = `const k = process.env.API_TOKEN; process.stdout.write("x ".repeat(493) + "key " + k + " and more\\n" + "y ".repeat(145) + "key " + k + " and more"); ${ENDS_WITH_STDIN}`;
    const transport = new StdioTransport({
      command: process.execPath,
      args: ["-e", script],
      env: { PATH: process.env.PATH ?? "", API_TOKEN: SECRET },
      onOtherOutput: (line) => other.push(line),
      onUnfinishedLine: (start) => unfinished.push(start),
      redact,
    });
    await transport.start();
    try {
      await vi.waitFor(() => expect([other.length, unfinished.length]).toEqual([1, 1]), {
        timeout: 10_000,
        interval: 20,
      });
      expect(other).toEqual([`${`${"x ".repeat(493)}key [redacted] and`.slice(0, 1000)}…`]);
      expect(unfinished).toEqual([`${"y ".repeat(145)}key [redacted] and more`.slice(0, 300)]);
      expect(JSON.stringify([other, unfinished])).not.toContain("pw12345678");
    } finally {
      await transport.close();
    }
  });

  it("a stderr line (cut at 64 KiB)", () => {
    const lines: string[] = [];
    const split = stderrLines((line) => lines.push(line), undefined, redact);
    // Character 65,536 falls after the credential's colon.
    split(Buffer.from(`${"z".repeat(65_526)} ${SECRET} and more\n`));
    expect(lines).toEqual([`${`${"z".repeat(65_526)} [redacted] and more`.slice(0, 65_536)}…`]);
    expect(lines[0]).not.toContain("pw12345678");
  });
});

describe("what a stdio server writes, cut where a chunk of it ended: a credential across that end redacted whole", () => {
  const SECRET = "pw12345678:SECRETtail99";
  const redact = (text: string) => scrub(text, [SECRET]);

  it("a stderr line over 64 KiB whose first chunk ends inside a credential", () => {
    const lines: string[] = [];
    const split = stderrLines((line) => lines.push(line), undefined, redact);
    // The first chunk is over 64 KiB already and ends after the credential's colon.
    split(Buffer.from(`${"x".repeat(65_520)} API_KEY=pw12345678:SE`));
    split(Buffer.from("CRETtail99 more\n"));
    expect(lines).toEqual([`${`${"x".repeat(65_520)} API_KEY=[redacted] more`.slice(0, 65_536)}…`]);
    expect(lines[0]).not.toContain("pw12345678");
  });

  it("a stderr line that never ends, cut inside a credential 16 KiB past 64 KiB, after redactions that shortened it", () => {
    const LONG = `sk-${"L".repeat(1997)}`;
    const lines: string[] = [];
    const split = stderrLines(
      (line) => lines.push(line),
      undefined,
      (text) => scrub(text, [SECRET, LONG]),
    );
    // Ten quotes of a 2,000-character key, each 1,990 characters shorter once redacted: the credential the
    // cut at 81,920 characters (64 KiB and 16 KiB within reach) goes through would come before 65,536.
    const quoted = `key ${LONG} `.repeat(10);
    const before = `${quoted}${"x".repeat(64 * 1024 + 16 * 1024 - quoted.length - 16)} API_KEY=`;
    split(Buffer.from(`${before}pw12345`));
    split(Buffer.from("678:SECRETtail99 and more, never ended"));
    split(Buffer.from("y".repeat(100_000)));
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain("pw12345");
    expect(lines[0]).toMatch(/^(key \[redacted\] ){10}x+…$/);
    // What was read of the line before the last 16 KiB, redacted.
    expect(lines[0]?.length).toBe(10 * "key [redacted] ".length + 64 * 1024 - quoted.length + 1);
  });

  it("the start of a stdout line not ended yet, told again when the next chunk brings the rest of a credential", async () => {
    const unfinished: string[] = [];
    // The first write ends inside the credential; the rest is written once svc has read it (a message on stdin).
    const script = `const k = process.env.API_TOKEN; process.stdout.write("y ".repeat(100) + "key " + k.slice(0, 13)); process.stdin.once("data", () => process.stdout.write(k.slice(13) + " and more")); ${ENDS_WITH_STDIN}`;
    const transport = new StdioTransport({
      command: process.execPath,
      args: ["-e", script],
      env: { PATH: process.env.PATH ?? "", API_TOKEN: SECRET },
      onUnfinishedLine: (start) => unfinished.push(start),
      redact,
    });
    await transport.start();
    try {
      await vi.waitFor(() => expect(unfinished).toHaveLength(1), { timeout: 10_000, interval: 20 });
      // All the process has written so far: the credential is not whole yet.
      expect(unfinished[0]).toBe(`${"y ".repeat(100)}key pw12345678:SE`);
      await transport.send({ jsonrpc: "2.0", method: "notifications/initialized" });
      await vi.waitFor(() => expect(unfinished).toHaveLength(2), { timeout: 10_000, interval: 20 });
      expect(unfinished[1]).toBe(`${"y ".repeat(100)}key [redacted] and more`);
    } finally {
      await transport.close();
    }
  });

  it("the start of a stdout line not ended yet, with a credential longer than the 1,200 bytes once read of it", async () => {
    const unfinished: string[] = [];
    // A token of 1,500 characters from character 254, in a line of 100 KiB: the 300 shown end inside it, and
    // so did the 1,200 bytes once read of the line.
    const TOKEN = `eyJ${"t".repeat(1497)}`;
    const script = `process.stdout.write("y ".repeat(125) + "tok " + process.env.TOKEN + " and more" + "z".repeat(100000)); ${ENDS_WITH_STDIN}`;
    const transport = new StdioTransport({
      command: process.execPath,
      args: ["-e", script],
      env: { PATH: process.env.PATH ?? "", TOKEN },
      onUnfinishedLine: (start) => unfinished.push(start),
      redact: (text) => scrub(text, [TOKEN]),
    });
    await transport.start();
    try {
      await vi.waitFor(() => expect(unfinished.at(-1)).toContain("and more"), {
        timeout: 10_000,
        interval: 20,
      });
      expect(unfinished.at(-1)).toBe(`${"y ".repeat(125)}tok [redacted] and more${"z".repeat(27)}`);
      expect(unfinished.join("")).not.toContain("eyJ");
    } finally {
      await transport.close();
    }
  });
});
