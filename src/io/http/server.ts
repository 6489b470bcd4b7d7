import type { Logger } from "../log.js";
import type { RequestHandler } from "./core.js";
import type { ListenOptions, ServerHandle } from "./listen.js";
import { listenNode } from "./node.js";
import { listenUws, loadUws } from "./uws.js";

export type { ListenOptions, ServerHandle } from "./listen.js";

export interface StartServerOptions extends ListenOptions {
  readonly handler: RequestHandler;
  readonly logger: Logger;
  /** Force an implementation; by default uWS, falling back to node:http when the binary cannot load. */
  readonly impl?: "uws" | "node";
  /** uWS on this many ingress threads (`platforms.webhook.workers`); 0: on the main thread. */
  readonly threads?: number;
  /** The body limit the threads read each body with (`max_body_bytes`; a reload sets it again). */
  readonly bodyLimit?: number;
  /**
   * The gateway's instance id, which the ingress threads' own `/health` 200 names (the handler's names it
   * through `IngressCore.instance`).
   */
  readonly instance?: string;
}

export async function startHttpServer(options: StartServerOptions): Promise<ServerHandle> {
  const listen = {
    host: options.host,
    port: options.port,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  };
  if (options.impl !== "node") {
    const loaded = await loadUws();
    if ("uws" in loaded) {
      const threads = options.threads ?? 0;
      if (threads > 0) {
        const { listenUwsThreads } = await import("./uwsThreads.js");
        return listenUwsThreads(options.handler, {
          ...listen,
          threads,
          bodyLimit: options.bodyLimit ?? Number.MAX_SAFE_INTEGER,
          ...(options.instance === undefined ? {} : { instance: options.instance }),
        });
      }
      return listenUws(loaded.uws, options.handler, listen);
    }
    options.logger.warn(
      `[webhook] uWebSockets.js cannot load here (${loaded.error}); using the node:http server`,
    );
    // `http_server: node` with workers is named by the config's own warning (src/config/unusedSettings.ts).
    if ((options.threads ?? 0) > 0)
      options.logger.warn(
        "[webhook] platforms.webhook.workers applies to the uWS server; node:http serves on the main thread",
      );
  }
  return listenNode(options.handler, listen);
}
