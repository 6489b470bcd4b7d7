import { connect, createServer, type Socket } from "node:net";
import { parseCommand } from "./resp.js";

/**
 * A loopback proxy in front of a test Redis that passes everything through, until a client sends a command
 * `holdAfter` picks: from then on what Redis answers on that connection is held (that command's reply
 * included) until `release()`. A test catches a client between sending a command and reading its answer
 * (a BullMQ worker whose fetch of a job is under way), without a timed wait.
 */
export interface ReplyHoldingProxy {
  readonly url: string;
  /** Resolves once a command `holdAfter` picks was passed on (its reply held). */
  readonly holding: Promise<void>;
  release(): void;
  close(): Promise<void>;
}

export async function startReplyHoldingProxy(
  redisPort: number,
  holdAfter: (args: readonly string[]) => boolean,
): Promise<ReplyHoldingProxy> {
  let held: Array<() => void> | undefined;
  let picked = false;
  let found: () => void = () => {};
  const holding = new Promise<void>((resolve) => {
    found = resolve;
  });
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(redisPort, "127.0.0.1");
    sockets.add(client);
    sockets.add(upstream);
    let inbox = Buffer.alloc(0);
    let holdingHere = false;
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
    upstream.on("data", (chunk: Buffer) => {
      if (holdingHere && held !== undefined) held.push(() => client.write(chunk));
      else client.write(chunk);
    });
    client.on("data", (chunk: Buffer) => {
      upstream.write(chunk);
      if (picked) return;
      inbox = Buffer.concat([inbox, chunk]);
      for (let command = parseCommand(inbox); command !== undefined; command = parseCommand(inbox)) {
        inbox = inbox.subarray(command.length);
        if (!holdAfter(command.args)) continue;
        picked = true;
        holdingHere = true;
        held = [];
        found();
        break;
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return {
    url: `redis://127.0.0.1:${port}/0`,
    holding,
    release() {
      const writes = held ?? [];
      held = undefined;
      for (const write of writes) write();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
