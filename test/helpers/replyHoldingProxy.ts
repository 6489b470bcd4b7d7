import { startRedisProxy } from "./redisProxy.js";
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
  const proxy = await startRedisProxy(redisPort, (client, upstream) => {
    let inbox = Buffer.alloc(0);
    let holdingHere = false;
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
  return {
    url: proxy.url,
    holding,
    release() {
      const writes = held ?? [];
      held = undefined;
      for (const write of writes) write();
    },
    close: proxy.close,
  };
}
