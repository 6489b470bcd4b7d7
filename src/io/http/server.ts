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
}

export async function startHttpServer(options: StartServerOptions): Promise<ServerHandle> {
  const listen = {
    host: options.host,
    port: options.port,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  };
  if (options.impl !== "node") {
    const loaded = await loadUws();
    if ("uws" in loaded) return listenUws(loaded.uws, options.handler, listen);
    options.logger.warn(
      `[webhook] uWebSockets.js cannot load here (${loaded.error}); using the node:http server`,
    );
  }
  return listenNode(options.handler, listen);
}
