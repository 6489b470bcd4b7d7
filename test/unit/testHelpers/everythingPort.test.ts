import { type ChildProcess, spawn } from "node:child_process";
import { createServer, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { launch, listensOn } from "../../fixtures/mcp/everything.js";

const listening = (server: Server, host?: string): Promise<number> =>
  new Promise((resolve) => {
    server.listen(0, host, () => resolve((server.address() as { port: number }).port));
  });

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

describe("the server-everything fixture's port", () => {
  it("listensOn tells a port a process listens on from one it does not, over IPv4 and IPv6", async () => {
    const v4 = createServer();
    const any = createServer();
    servers.push(v4, any);
    const v4Port = await listening(v4, "127.0.0.1");
    const anyPort = await listening(any); // `::`, as server-everything listens
    expect(listensOn(process.pid, v4Port)).toBe(true);
    expect(listensOn(process.pid, anyPort)).toBe(true);
    await new Promise((resolve) => v4.close(resolve));
    servers.splice(servers.indexOf(v4), 1);
    expect(listensOn(process.pid, v4Port)).toBe(false);
  });

  it("listensOn does not count another process's listener as this one's", async () => {
    const other: ChildProcess = spawn(
      process.execPath,
      [
        "-e",
        "require('net').createServer().listen(0, '127.0.0.1', function () { console.log(this.address().port) })",
      ],
      { stdio: ["ignore", "pipe", "ignore"] },
    );
    try {
      const port = await new Promise<number>((resolve) =>
        other.stdout?.once("data", (chunk) => resolve(Number(String(chunk).trim()))),
      );
      expect(listensOn(other.pid as number, port)).toBe(true);
      expect(listensOn(process.pid, port)).toBe(false);
    } finally {
      other.kill("SIGKILL");
    }
  });

  it("a launch on a port another process holds is refused, though the server says it is running on it", async () => {
    // Express 5 calls server-everything's listen callback with the bind's error too, which prints its
    // "running on port" line: the launch must not take that line for a listening server.
    const holder = createServer();
    servers.push(holder);
    const port = await listening(holder, "127.0.0.1");
    await expect(launch("sse", port)).rejects.toThrow(`port ${port} is held by another process`);
  });
});
