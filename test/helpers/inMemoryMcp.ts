import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { TransportFor } from "../../src/io/mcp/connect.js";

/**
 * A hub's `transportFor` that connects each configured server name to a fresh real SDK server over a
 * linked InMemoryTransport pair: for tests about svc's logic (naming, filters, trust, server requests),
 * not about a transport. Each session attempt builds its own server (an McpServer takes one transport).
 */
export function inMemoryServers(
  build: Readonly<Record<string, () => McpServer | Server>> | ((name: string) => McpServer | Server),
): TransportFor {
  return (name) => {
    const make =
      typeof build === "function" ? () => build(name) : Object.hasOwn(build, name) ? build[name] : undefined;
    if (make === undefined) throw new Error(`no in-memory server named "${name}"`);
    const [client, server] = InMemoryTransport.createLinkedPair();
    void make().connect(server);
    return client;
  };
}

/** A config entry for an in-memory server: a command never run (the transport replaces it). */
export const IN_MEMORY_ENTRY = { command: "in-memory-server" } as const;
