import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { type ApprovalSurface, policyApprovals } from "../../../src/actors/mcp/approvals.js";
import { type HubOptions, McpHub } from "../../../src/actors/mcp/hub.js";
import { readEnvFile } from "../../../src/config/envFile.js";
import { type McpServerEntry, mcpServerSchema } from "../../../src/config/sections/mcp.js";
import { silentLogger } from "../../../src/io/log.js";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

export const STDIO_FIXTURE = await bundledFixture(
  resolve(import.meta.dirname, "../../fixtures/mcp/stdio-server.mjs"),
);

export function entry(raw: Record<string, unknown>): McpServerEntry {
  return mcpServerSchema.parse(raw);
}

export function stdioEntry(
  mode = "legacy",
  extra: Record<string, unknown> = {},
  flags: string[] = [],
): McpServerEntry {
  return entry({ command: process.execPath, args: [STDIO_FIXTURE, mode, ...flags], ...extra });
}

/** A hub over a temp SVC_HOME: `.env` of the home is re-read at each connect, like the gateway does. */
export function makeHub(
  home: TempHome,
  servers: Record<string, McpServerEntry>,
  options: Partial<HubOptions> & { approvals?: ApprovalSurface; env?: NodeJS.ProcessEnv } = {},
): McpHub {
  const env = options.env ?? { PATH: process.env.PATH };
  const hub = new McpHub({
    servers,
    cacheDir: join(home.dir, "mcp-cache"),
    scope: () => ({ secrets: readEnvFile(join(home.dir, ".env")), env }),
    logger: silentLogger(),
    approvals: options.approvals ?? policyApprovals("deny", silentLogger()),
    ...options,
  });
  hub.start();
  return hub;
}

/**
 * Approvals under which the fixture's "ask" tool waits on an elicitation nobody answers: `asked` tells when
 * the call is in flight (and stays so until its process or the hub ends it).
 */
export function pendingElicitation(): { asked: Promise<void>; approvals: ApprovalSurface } {
  let asked: () => void = () => undefined;
  const promise = new Promise<void>((r) => {
    asked = r;
  });
  const elicit = () => {
    asked();
    return new Promise<never>(() => undefined);
  };
  return { asked: promise, approvals: { approve: async () => false, elicit } };
}

/** `gateway.approvals: deny`, remembering which tools it was asked about. */
export function recordingDeny(): { asked: string[]; approvals: ApprovalSurface } {
  const asked: string[] = [];
  const deny = policyApprovals("deny", silentLogger());
  return {
    asked,
    approvals: {
      approve: (request, signal) => {
        asked.push(request.tool);
        return deny.approve(request, signal);
      },
      elicit: (request, signal) => deny.elicit(request, signal),
    },
  };
}

export function text(result: { content: unknown }): string {
  return (result.content as Array<{ type: string; text?: string }>).map((c) => c.text ?? "").join("");
}

/** Per-test temp SVC_HOME and hubs, stopped and removed after each test. */
export function useHubs() {
  let current: TempHome | undefined;
  const hubs: McpHub[] = [];
  beforeEach(() => {
    current = tempHome();
  });
  afterEach(async () => {
    await Promise.all(hubs.splice(0).map((h) => h.stop()));
    current?.cleanup();
  });
  return {
    get home(): TempHome {
      return current as TempHome;
    },
    hub(...args: Parameters<typeof makeHub>): McpHub {
      const h = makeHub(...args);
      hubs.push(h);
      return h;
    },
  };
}

/**
 * A home and hubs of the test's own, stopped and removed when it ends: for tests that run at once, where
 * `useHubs`' home and hubs are one test's at a time. `finished`: the test's own `onTestFinished`, from its
 * context (the module's is not told which of the tests running at once it belongs to).
 */
export function ownHubs(finished: (fn: () => Promise<void>) => void): {
  readonly home: TempHome;
  hub(servers: Record<string, McpServerEntry>, options?: Parameters<typeof makeHub>[2]): McpHub;
} {
  const home = tempHome();
  const hubs: McpHub[] = [];
  finished(async () => {
    await Promise.all(hubs.map((h) => h.stop()));
    home.cleanup();
  });
  return {
    home,
    hub(servers, options) {
      const made = makeHub(home, servers, options);
      hubs.push(made);
      return made;
    },
  };
}

/**
 * Starts node:http servers on 127.0.0.1 for a test (`serve(handler)` resolves to the port); each is closed
 * after the test, its open connections (an event stream the client keeps) with it.
 */
export function useLoopbackHttp(): (handler: RequestListener) => Promise<number> {
  const servers: Server[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    }
  });
  return async (handler) => {
    const server = createServer(handler);
    servers.push(server);
    await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
    return (server.address() as AddressInfo).port;
  };
}

/** A JSON-RPC request a raw Streamable HTTP server was sent. */
export interface RawRpcRequest {
  readonly id: number;
  readonly method: string;
  readonly params?: { readonly protocolVersion?: string };
}

/**
 * What a raw Streamable HTTP server reads of a POST: its JSON-RPC request, or undefined when answered here
 * (another method: 405; a notification: 202).
 */
export async function readRpcRequest(
  req: IncomingMessage,
  res: ServerResponse,
): Promise<RawRpcRequest | undefined> {
  if (req.method !== "POST") {
    res.writeHead(405).end();
    return undefined;
  }
  let body = "";
  for await (const chunk of req) body += chunk;
  const message = JSON.parse(body) as Partial<RawRpcRequest>;
  if (message.id === undefined) {
    res.writeHead(202).end();
    return undefined;
  }
  return message as RawRpcRequest;
}
