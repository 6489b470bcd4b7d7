import { EventEmitter } from "node:events";
import type { Socket } from "node:net";
import type { buildConnector } from "undici";
import { describe, expect, it } from "vitest";
import { ConnectAttempts } from "../../../src/io/mcp/connectAttempts.js";

/**
 * Where a url server's connections stopped (docs/mcp.md, A process that exits, or never answers the
 * handshake), over a connector whose sockets the test drives: `take` is the server taking the TCP
 * connection, `settle` undici's connector reporting the connection made or failed.
 */
function connections() {
  const attempts = new ConnectAttempts();
  const open: { socket: Socket & EventEmitter; settle: buildConnector.Callback; destroyedWith?: Error }[] =
    [];
  const connector = ((_options, callback) => {
    const socket = new EventEmitter() as Socket & EventEmitter;
    const made: (typeof open)[number] = { socket, settle: callback };
    socket.destroy = ((err?: Error) => {
      made.destroyedWith = err as Error;
      callback(err as Error, null);
      return socket;
    }) as Socket["destroy"];
    open.push(made);
    return socket;
  }) as buildConnector.connector;
  const watched = attempts.watch(connector);
  const connect = (protocol = "https:") => {
    watched({ hostname: "127.0.0.1", port: "8443", protocol }, () => undefined);
    return open.at(-1) as (typeof open)[number];
  };
  return { attempts, connect, take: (made: (typeof open)[number]) => made.socket.emit("connect") };
}

const timedOut = Object.assign(new Error("Connect Timeout Error"), { code: "UND_ERR_CONNECT_TIMEOUT" });

describe("ConnectAttempts", () => {
  it("a connection taken whose TLS handshake waits, or timed out, is a TLS stall", () => {
    const { attempts, connect, take } = connections();
    const first = connect();
    expect(attempts.stall()).toEqual({ stage: "tcp", address: "127.0.0.1:8443" });
    take(first);
    expect(attempts.stall()).toEqual({ stage: "tls", address: "127.0.0.1:8443" });
    first.settle(timedOut, null);
    // A later connection not taken yet does not hide it.
    connect();
    expect(attempts.stall()).toEqual({ stage: "tls", address: "127.0.0.1:8443" });
  });

  it("a plain connection the system made before its connect event ran (a busy machine) is no TCP stall", () => {
    const { attempts, connect } = connections();
    const made = connect("http:");
    // What a socket's handle answers: 0 once the system made the connection, ENOTCONN while it waits.
    const peer = { answer: -107 };
    Object.assign(made.socket, { _handle: { getpeername: () => peer.answer } });
    expect(attempts.stall()).toEqual({ stage: "tcp", address: "127.0.0.1:8443" });
    peer.answer = 0;
    expect(attempts.stall()).toBeUndefined();
  });

  it("none once a connection was made: the server answered TLS", () => {
    const { attempts, connect, take } = connections();
    take(connect());
    const made = connect();
    take(made);
    made.settle(null, made.socket);
    expect(attempts.stall()).toBeUndefined();
    take(connect());
    expect(attempts.stall()).toBeUndefined();
  });

  it("a connection that failed for a reason of its own (refused, a certificate) is no stall", () => {
    const { attempts, connect, take } = connections();
    const refused = connect();
    take(refused);
    refused.settle(
      Object.assign(new Error("self-signed certificate"), { code: "DEPTH_ZERO_SELF_SIGNED_CERT" }),
      null,
    );
    expect(attempts.stall()).toBeUndefined();
  });

  it("a plain http connection taken is made: no TLS to wait for", () => {
    const { attempts, connect, take } = connections();
    const made = connect("http:");
    take(made);
    made.settle(null, made.socket);
    expect(attempts.stall()).toBeUndefined();
  });

  it("abandon ends the connections still being made, with an error undici passes on; the stall stays", () => {
    const { attempts, connect, take } = connections();
    const hung = connect();
    take(hung);
    attempts.abandon();
    expect(hung.destroyedWith?.message).toBe("the connection was given up before it was made");
    expect(attempts.stall()).toEqual({ stage: "tls", address: "127.0.0.1:8443" });
  });

  it("abandon leaves the connections made alone", () => {
    const { attempts, connect, take } = connections();
    const made = connect();
    take(made);
    made.settle(null, made.socket);
    attempts.abandon();
    expect(made.destroyedWith).toBeUndefined();
  });
});
