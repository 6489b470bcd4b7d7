import type { Socket } from "node:net";
import { startRedisProxy } from "./redisProxy.js";
import { parseCommand, replyLength } from "./resp.js";

/**
 * A loopback proxy in front of a test Redis that plays a Redis still loading its data after a restart, for
 * as long as the test wants (no big dump to load): it answers INFO as such a Redis does (`loading:1`, how
 * far, how long left), passes the connection's handshake on to the real server (HELLO, AUTH, SELECT,
 * CLIENT: Redis answers them while it loads) and answers every other command `-LOADING`. `loaded()` ends
 * the load: from there on every connection is passed through as is (one still waiting for its INFO's
 * answer included).
 */
export interface LoadingRedis {
  readonly url: string;
  /** Ends the load: from now on the real Redis answers. */
  loaded(): void;
  /** How many INFO commands were answered as loading. */
  infoAnswered(): number;
  close(): Promise<void>;
}

/** Commands a Redis that loads its data answers (and ioredis sends to open a connection). */
const HANDSHAKE = new Set(["hello", "auth", "select", "client", "readonly"]);

const LOADING_INFO =
  "# Persistence\r\nloading:1\r\nasync_loading:0\r\nloading_loaded_perc:42.00\r\nloading_eta_seconds:1\r\n";

/**
 * `infoRefused`: INFO is answered -LOADING too (as no Redis does; a proxy in front of one might).
 * `password`: the real Redis asks for one, so an INFO before the connection's AUTH (or HELLO … AUTH) is
 * answered -NOAUTH, as such a Redis answers it.
 */
export async function startLoadingRedis(
  redisPort: number,
  options: { readonly infoRefused?: boolean; readonly password?: boolean } = {},
): Promise<LoadingRedis> {
  let loading = true;
  let answered = 0;
  const serve = (client: Socket, upstream: Socket) => {
    let inbox = Buffer.alloc(0);
    let replies = Buffer.alloc(0);
    let passThrough = false;
    let busy = false;
    let replied: ((reply: Buffer) => void) | undefined;
    let authenticated = options.password !== true;
    upstream.on("data", (chunk: Buffer) => {
      if (passThrough) return void client.write(chunk);
      replies = Buffer.concat([replies, chunk]);
      const length = replyLength(replies);
      if (length === undefined || replied === undefined) return;
      const reply = replies.subarray(0, length);
      replies = replies.subarray(length);
      const give = replied;
      replied = undefined;
      give(reply);
    });
    const pump = async () => {
      if (busy) return;
      busy = true;
      for (;;) {
        if (!loading) {
          passThrough = true;
          upstream.write(inbox);
          inbox = Buffer.alloc(0);
          break;
        }
        const command = parseCommand(inbox);
        if (command === undefined) break;
        const raw = inbox.subarray(0, command.length);
        inbox = inbox.subarray(command.length);
        const name = (command.args[0] ?? "").toLowerCase();
        if (name === "auth" || (name === "hello" && command.args.some((arg) => /^auth$/i.test(arg))))
          authenticated = true;
        if (name === "info" && !authenticated) client.write("-NOAUTH Authentication required.\r\n");
        else if (name === "info" && options.infoRefused !== true) {
          answered += 1;
          client.write(`$${Buffer.byteLength(LOADING_INFO)}\r\n${LOADING_INFO}\r\n`);
        } else if (HANDSHAKE.has(name)) {
          const reply = new Promise<Buffer>((resolve) => {
            replied = resolve;
          });
          upstream.write(raw);
          client.write(await reply);
        } else client.write("-LOADING Redis is loading the dataset in memory\r\n");
      }
      busy = false;
    };
    client.on("data", (chunk: Buffer) => {
      if (passThrough) return void upstream.write(chunk);
      inbox = Buffer.concat([inbox, chunk]);
      void pump();
    });
  };
  const proxy = await startRedisProxy(redisPort, serve);
  return {
    url: proxy.url,
    loaded() {
      loading = false;
    },
    infoAnswered: () => answered,
    close: proxy.close,
  };
}
