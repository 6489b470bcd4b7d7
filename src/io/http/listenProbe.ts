import { request } from "node:http";
import { createServer } from "node:net";
import type { WrittenAs } from "../../config/describe.js";
import { svcPaths } from "../../config/paths.js";
import { describeError } from "../../errors.js";
import { gatewayStateFile, readGatewayState, recordBeforeClaim, recordedGatewayOn } from "../gatewayState.js";
import { pidNamespace } from "../pidNamespace.js";
import { INSTANCE_HEADER } from "./instanceHeader.js";
import { listenFailureHint, type PortHolder, shownHost, withShownHost } from "./listenHint.js";

/**
 * Why the gateway could not listen on `host` whatever its port: a name that does not resolve, an address
 * that is not this machine's. Found by binding a free port on it and closing it at once (`svc config
 * check`, which binds nothing else); said with the hint the gateway's refused start gives. Undefined when
 * it can listen there.
 */
export async function listenHostProblem(
  host: string,
  hostKey = "platforms.webhook.host",
  /** The file's text for a host a `${VAR}` gave, named instead of it. */
  given?: WrittenAs,
): Promise<string | undefined> {
  const server = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen({ host, port: 0, exclusive: true }, resolve);
    });
    return undefined;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return `cannot listen on ${shownHost(host, given)} (${withShownHost(describeError(err), host, undefined, given)}) — ${listenFailureHint(host, { hostKey, code, given })}`;
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

/** How long the question to what holds a port may take, in all (a gateway answers /health at once). */
const HOLDER_WAIT_MS = 1000;
/** The most of its answer read: an svc gateway's /health is some 40 bytes. */
const HOLDER_ANSWER_BYTES = 4096;

/** Where a listener on `host` is reached from this machine: the loopback addresses for "every interface". */
function reachedAt(host: string): string[] {
  const bare = host.replace(/^\[|\]$/g, "");
  if (bare === "0.0.0.0") return ["127.0.0.1"];
  if (bare === "::") return ["::1", "127.0.0.1"];
  return [bare];
}

/**
 * How what listens on `host:port` answers `GET /health`: `{ instance }`, as an svc gateway does (`200
 * {"status":"ok","platform":"webhook"}`) naming its instance in `Svc-Instance`; "unnamed", svc's body
 * without that header (an svc gateway older than this version, or another program answering as one);
 * "other" otherwise (another answer, bytes that are no HTTP, the connection closed, or no answer by
 * `deadline`); "none" when nothing takes the connection.
 */
function healthAnswer(
  host: string,
  port: number,
  deadline: number,
): Promise<{ readonly instance: string } | "unnamed" | "other" | "none"> {
  return new Promise((resolve) => {
    let connected = false;
    let settled = false;
    const done = (answer: { readonly instance: string } | "unnamed" | "other" | "none") => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve(answer);
    };
    const req = request({ host, port, path: "/health", method: "GET", agent: false }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const instance = res.headers[INSTANCE_HEADER.toLowerCase()];
      const judge = () => {
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
          if (res.statusCode !== 200 || body.status !== "ok" || body.platform !== "webhook")
            return done("other");
          done(typeof instance === "string" && instance !== "" ? { instance } : "unnamed");
        } catch {
          done("other");
        }
      };
      res.on("data", (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (size > HOLDER_ANSWER_BYTES) done("other");
      });
      res.on("end", judge);
      res.on("error", () => done("other"));
    });
    req.on("socket", (socket) => socket.once("connect", () => (connected = true)));
    req.on("error", () => done(connected ? "other" : "none"));
    const timer = setTimeout(
      () => done(connected ? "other" : "none"),
      Math.max(0, deadline - performance.now()),
    );
    req.end();
  });
}

/**
 * What holds `port` on `host`, which the listener could not take: the gateway of `home` when its
 * `gateway.json` records that port and names a live gateway of it; else what answers `GET /health` there,
 * asked once, for a second at most: the gateway of `home` all the same when its answer names the instance
 * `gateway.json` records (one this process cannot see: of another PID namespace), another svc gateway when
 * it names another, one that cannot be told from another program answering as svc does when it names
 * none, or another program. Undefined when it cannot be told (nothing takes a connection there). Asked only
 * when a start failed, never on the way to listening.
 */
export async function portHolder(host: string, port: number, home?: string): Promise<PortHolder | undefined> {
  const paths = home === undefined ? undefined : svcPaths(home);
  const own = paths === undefined ? undefined : recordedGatewayOn(paths, port);
  if (own !== undefined && paths !== undefined)
    return { kind: "this_home", home: paths.home, pidFile: paths.pidFile, ...own };
  const deadline = performance.now() + HOLDER_WAIT_MS;
  for (const at of reachedAt(host)) {
    const answer = await healthAnswer(at, port, deadline);
    if (answer === "none") continue;
    if (answer === "unnamed") return { kind: "svc_unnamed" };
    if (answer === "other") return { kind: "other" };
    // Before this start's claim, the record it was written over: the gateway of another PID namespace's.
    const stateFile = paths === undefined ? undefined : gatewayStateFile(paths);
    const recorded =
      stateFile === undefined ? undefined : (recordBeforeClaim(stateFile) ?? readGatewayState(stateFile));
    if (paths === undefined || recorded === undefined || recorded.instance !== answer.instance)
      return { kind: "svc" };
    const namespace = recorded.pid_namespace;
    return {
      kind: "this_home_unseen",
      home: paths.home,
      stateFile: gatewayStateFile(paths),
      pid: recorded.pid,
      ...(namespace !== undefined && namespace !== pidNamespace() ? { namespace } : {}),
    };
  }
  return undefined;
}

/**
 * Why the listener could not take `host:port` and what to do, for its refused start: the system's reason
 * (`listenRefusal`) and, for a busy port, what holds it (`portHolder`).
 */
export async function listenFailure(
  host: string,
  port: number,
  context: {
    readonly inspectPort?: number | undefined;
    readonly home?: string | undefined;
    /** The port's key as written, for the hint (`platforms.webhook.extra.port`). */
    readonly portKey?: string | undefined;
    /** The host's key as written (`platforms.webhook.extra.host`). */
    readonly hostKey?: string | undefined;
    /** The file's text for a host a `${VAR}` gave, named instead of it. */
    readonly given?: WrittenAs | undefined;
  } = {},
): Promise<string> {
  const code = await listenRefusal(host, port);
  const holder =
    code === "EADDRINUSE" && port !== context.inspectPort
      ? await portHolder(host, port, context.home)
      : undefined;
  return listenFailureHint(host, {
    port,
    inspectPort: context.inspectPort,
    code,
    holder,
    portKey: context.portKey,
    hostKey: context.hostKey,
    given: context.given,
  });
}
