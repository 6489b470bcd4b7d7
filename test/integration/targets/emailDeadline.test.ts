import type { AddressInfo } from "node:net";
import { createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { message, registryFor, sendError } from "./support.js";

/**
 * An SMTP server that takes the mail's envelope and DATA, then answers the end of the mail one `250-` line a
 * second and never the last line: each of nodemailer's timeouts is an idle timer, so the delivery waited
 * on it for ever, and a gateway's stop waited too.
 */
let server: Server | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

async function tricklingSmtp(): Promise<number> {
  const smtp = createServer((socket) => {
    sockets.push(socket);
    socket.write("220 trickle ESMTP\r\n");
    let data = false;
    let buffered = "";
    socket.on("data", (chunk) => {
      buffered += chunk.toString("latin1");
      let end = buffered.indexOf("\r\n");
      while (end >= 0) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        if (data) {
          if (line === ".") {
            const timer = setInterval(() => socket.write("250-still working\r\n"), 200);
            socket.on("close", () => clearInterval(timer));
          }
        } else if (/^(EHLO|HELO)/i.test(line)) socket.write("250 trickle\r\n");
        else if (/^DATA/i.test(line)) {
          data = true;
          socket.write("354 go ahead\r\n");
        } else socket.write("250 ok\r\n");
        end = buffered.indexOf("\r\n");
      }
    });
    socket.on("error", () => undefined);
  });
  server = smtp;
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve));
  return (smtp.address() as AddressInfo).port;
}

const email = (port: number) =>
  registryFor({
    email: {
      enabled: true,
      host: "127.0.0.1",
      port,
      secure: false,
      from: "svc@example.org",
      home_channel: "ops@example.org",
      timeout_seconds: 1,
    },
  });

describe("email: a server that keeps answering without ending the mail", () => {
  it("fails the delivery at its deadline (timeout_seconds and a little more), as a transient failure", async () => {
    const error = (await sendError(email(await tricklingSmtp()), "email", message("hello"))) as Error;
    expect(error).toMatchObject({ transient: true });
    expect(error.message).toBe(
      "email: the SMTP server did not finish taking the mail within timeout_seconds (1s)",
    );
  }, 20_000);

  it("ends the delivery at a stop, with the stop's reason", async () => {
    const target = email(await tricklingSmtp()).get("email");
    const stop = new AbortController();
    const sending = target?.send(message("hello"), stop.signal).catch((err: unknown) => err);
    // The stop comes while the server trickles (its deadline is 3 s away).
    await new Promise((resolve) => setTimeout(resolve, 300));
    stop.abort(new Error("the gateway stopped"));
    expect(((await sending) as Error).message).toBe("the gateway stopped");
  }, 20_000);
});
