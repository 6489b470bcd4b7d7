import { createServer, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { RequestHandler } from "../../../src/io/http/core.js";
import { listenNode } from "../../../src/io/http/node.js";
import { listenUws, loadUws } from "../../../src/io/http/uws.js";

const health: RequestHandler = (_head, _body, reply) => reply({ status: 200, body: { status: "ok" } });

let holder: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => (holder === undefined ? resolve(undefined) : holder.close(resolve)));
  holder = undefined;
});

/** A port another program holds on the IPv6 loopback. */
async function heldV6Port(): Promise<number> {
  const server = createServer();
  holder = server;
  await new Promise<void>((resolve) => server.listen({ host: "::1", port: 0 }, resolve));
  return (server.address() as { port: number }).port;
}

/**
 * A listener that could not bind an IPv6 host named it as `::1:8644`, an address nothing can use as
 * written; svc gateway status, start and config check write `[::1]:8644`.
 */
describe("cannot listen on an IPv6 host: the address in brackets", () => {
  it("node:http", { timeout: 3000 }, async () => {
    const port = await heldV6Port();
    // A busy port's reason is the start's hint (what holds it), not the system's text.
    await expect(listenNode(health, { host: "::1", port })).rejects.toThrow(
      new RegExp(`^cannot listen on \\[::1\\]:${port}$`),
    );
  });

  it("uWS", { timeout: 3000 }, async () => {
    const loaded = await loadUws();
    if (!("uws" in loaded)) return;
    const port = await heldV6Port();
    await expect(listenUws(loaded.uws, health, { host: "::1", port })).rejects.toThrow(
      `cannot listen on [::1]:${port}`,
    );
  });
});
