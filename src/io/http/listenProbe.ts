import { createServer } from "node:net";
import { describeError } from "../../errors.js";
import { listenFailureHint } from "./listenHint.js";

/**
 * Why the gateway could not listen on `host` whatever its port: a name that does not resolve, an address
 * that is not this machine's. Found by binding a free port on it and closing it at once (`svc config
 * check`, which binds nothing else); said with the hint the gateway's refused start gives. Undefined when
 * it can listen there.
 */
export async function listenHostProblem(host: string): Promise<string | undefined> {
  const server = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen({ host, port: 0, exclusive: true }, resolve);
    });
    return undefined;
  } catch (err) {
    return `cannot listen on ${host} (${describeError(err)}) — ${listenFailureHint(host)}`;
  } finally {
    server.close();
  }
}

/**
 * The system's reason (`EACCES`, `EADDRINUSE`, ...) a listener on `host:port` is refused, found by binding
 * it with node:net and closing it at once: uWS says only that it could not listen. Undefined when that
 * bind succeeds (the cause went away) or fails without a code.
 */
export async function listenRefusal(host: string, port: number): Promise<string | undefined> {
  const server = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen({ host, port, exclusive: true }, resolve);
    });
    return undefined;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code;
  } finally {
    server.close();
  }
}
