import type { AddressInfo } from "node:net";
import { createServer, type Server, type Socket } from "node:net";
import { generateText } from "ai";
import { afterEach, describe, expect, it } from "vitest";
import { describeModelError } from "../../../src/agent/modelError.js";
import { languageModel } from "../../../src/agent/provider.js";
import { isRetryable } from "../../../src/agent/retry.js";

/**
 * docs/agent.md, Faults: what a model endpoint that closed the connection (or answered what is no HTTP) adds
 * about agent.base_url. Servers on loopback that do one thing with each connection: a TLS port sent plain
 * HTTP closes it before any byte of an answer, as a crashed server does (said as a possibility); one whose
 * answer began is no TLS port; an answer in TLS is one for sure; an `https://` connection closed during the
 * handshake may be a server requiring a client certificate.
 */
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

/** A TCP server that hands each connection's first bytes (a request, a TLS hello) to `onFirst`. */
async function serving(onFirst: (socket: Socket) => void): Promise<number> {
  const server = createServer((socket) => {
    socket.on("error", () => {});
    socket.once("data", () => onFirst(socket));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

async function failureAt(baseUrl: string): Promise<unknown> {
  const settings = { provider: "openai" as const, model: "m", base_url: baseUrl, api_key: "sk-test" };
  return generateText({ model: languageModel(settings), prompt: "hi", maxRetries: 0 }).then(
    () => {
      throw new Error("the request succeeded");
    },
    (err: unknown) => err,
  );
}

const DROPPED =
  "the server, or a proxy in front of it, dropped the request: its log says why (a crash, a restart, a limit of its own)";

describe("a model endpoint that closed the connection or answered in TLS", () => {
  it("http://, closed before any byte of an answer (a TLS port, or a crash): says it may serve HTTPS, and is retried", async () => {
    const port = await serving((socket) => socket.destroy());
    const url = `http://127.0.0.1:${port}/v1/chat/completions`;
    const err = await failureAt(`http://127.0.0.1:${port}/v1`);
    expect(describeModelError(err, [])).toBe(
      `model endpoint ${url} closed the connection without answering (other side closed) — ${DROPPED}; if it serves HTTPS on this port, write https:// in agent.base_url`,
    );
    expect(isRetryable(err)).toBe(true);
  });

  it("http://, closed after its answer began (no TLS port): no https:// advice", async () => {
    const port = await serving((socket) => {
      socket.write("HTTP/1.1 200 OK\r\n");
      setTimeout(() => socket.destroy(), 20);
    });
    const url = `http://127.0.0.1:${port}/v1/chat/completions`;
    expect(describeModelError(await failureAt(`http://127.0.0.1:${port}/v1`), [])).toBe(
      `model endpoint ${url} closed the connection without answering (other side closed) — ${DROPPED}`,
    );
  });

  it("http://, answered with a TLS record (an alert): says the port serves HTTPS", async () => {
    const port = await serving((socket) =>
      socket.end(Buffer.from([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x46])),
    );
    expect(describeModelError(await failureAt(`http://127.0.0.1:${port}/v1`), [])).toMatch(
      / — the server answered in TLS: it serves HTTPS on this port, write https:\/\/ in agent\.base_url$/,
    );
  });

  it("https://, closed during the TLS handshake: may require a client certificate, which svc cannot send; retried", async () => {
    const port = await serving((socket) => socket.destroy());
    const url = `https://127.0.0.1:${port}/v1/chat/completions`;
    const err = await failureAt(`https://127.0.0.1:${port}/v1`);
    expect(describeModelError(err, [])).toBe(
      `model endpoint ${url} closed the connection without answering (Client network socket disconnected before secure TLS connection was established) — ${DROPPED}; if it requires a TLS client certificate (mTLS), which svc cannot send to a model endpoint, it closes every connection during the handshake so: let it take svc's requests without one, or put a proxy in front of it that presents one`,
    );
    expect(isRetryable(err)).toBe(true);
  });
});
