import { networkInterfaces } from "node:os";
import { describe, type WrittenAs } from "../../config/describe.js";
import { nearMiss } from "../../config/nearMiss.js";
import { textWithoutUrlCredentials } from "../../config/urlCredentials.js";

const ANY_OR_LOOPBACK = new Set(["0.0.0.0", "::", "localhost", "127.0.0.1", "::1"]);

function isLocalAddress(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  if (ANY_OR_LOOPBACK.has(bare) || bare.startsWith("127.")) return true;
  return Object.values(networkInterfaces()).some((list) => list?.some((a) => a.address === bare));
}

/**
 * The interfaces that have `host`, a link-local IPv6 address (fe80::/10) written without its zone: such an
 * address belongs to one interface, and is bound only with it (`fe80::1%eth0`; without it, EINVAL).
 */
function linkLocalInterfaces(host: string): string[] {
  const bare = host.replace(/^\[|\]$/g, "");
  if (!/^fe[89ab][0-9a-f]?:/i.test(bare) || bare.includes("%")) return [];
  return Object.entries(networkInterfaces())
    .filter(([, list]) => list?.some((a) => a.family === "IPv6" && a.address === bare))
    .map(([name]) => name);
}

/** `host:port` as an address is written: an IPv6 host in brackets (`[::1]:8644`, not `::1:8644`). */
export function listenAddress(host: string, port: number): string {
  return `${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${port}`;
}

/**
 * `host` as a message first names it: the file's text for a host a `${VAR}` gave (`given`:
 * `"${BIND_HOST}" (the value it gives is not shown)`), never what the variable gave.
 */
export function shownHost(host: string, given?: WrittenAs): string {
  return given === undefined ? host : describe(given);
}

/** `host` as a hint names it after that: `the value ${BIND_HOST} gives` for one a `${VAR}` gave. */
function hostInHint(host: string, given?: WrittenAs): string {
  return given === undefined ? host : `the value ${textWithoutUrlCredentials(String(given.text))} gives`;
}

/**
 * A listener's or the system's error text (`cannot listen on <host>:8644`, `getaddrinfo ENOTFOUND <host>`) with
 * a host a `${VAR}` gave named as the file writes it: its address as `shownHost` says it, anywhere else its
 * text (`getaddrinfo ENOTFOUND ${BIND_HOST}`).
 */
export function withShownHost(
  text: string,
  host: string,
  port: number | undefined,
  given?: WrittenAs,
): string {
  if (given === undefined || host === "") return text;
  const address =
    port === undefined
      ? text
      : text.split(listenAddress(host, port)).join(`${shownHost(host, given)}, port ${port}`);
  return address.split(host).join(textWithoutUrlCredentials(String(given.text)));
}

/**
 * A listener's failure to bind, said as the uWS listener says it (`cannot listen on <address>`): the start
 * adds the hint of what holds a busy port. The system's reason is kept for the other failures, which that
 * hint may not explain.
 */
export function bindFailure(host: string, port: number, err: NodeJS.ErrnoException): Error {
  const reason = err.code === "EADDRINUSE" ? "" : ` (${err.message})`;
  return new Error(`cannot listen on ${listenAddress(host, port)}${reason}`);
}

/**
 * What holds a port the listener could not take (`EADDRINUSE`), found at that failure only
 * (`listenProbe.ts`): the gateway of this SVC_HOME (its `gateway.json` records the port; `named`: its
 * `gateway.pid` names it too), the same seen by its answer alone (`this_home_unseen`: its `GET /health` names
 * the instance `gateway.json` records, but no process of this SVC_HOME here is it), another svc gateway (its
 * `GET /health` answers as one does, naming another instance), an svc gateway older than this version or
 * another program answering as one (`svc_unnamed`: svc's body without `Svc-Instance`), or another program.
 */
export type PortHolder =
  | {
      readonly kind: "this_home";
      readonly home: string;
      readonly pidFile: string;
      readonly pid: number;
      readonly named: boolean;
    }
  | {
      readonly kind: "this_home_unseen";
      readonly home: string;
      readonly stateFile: string;
      /** The pid `gateway.json` records. */
      readonly pid: number;
      /** The PID namespace it records for that pid, when it is not this process's. */
      readonly namespace?: string;
    }
  | { readonly kind: "svc" }
  | { readonly kind: "svc_unnamed" }
  | { readonly kind: "other" };

export interface ListenFailure {
  readonly port?: number | undefined;
  /** The port this gateway's own `--inspect` relay took before it, which no other gateway holds. */
  readonly inspectPort?: number | undefined;
  /** The system's reason, when known (`EACCES`, `EADDRINUSE`, ...). */
  readonly code?: string | undefined;
  /** What holds the port, when it could be told. */
  readonly holder?: PortHolder | undefined;
  /** The port's key as written (`platforms.webhook.extra.port` when it is under `extra`, whose value wins). */
  readonly portKey?: string | undefined;
  /** The host's key as written (`platforms.webhook.extra.host` when it is under `extra`). */
  readonly hostKey?: string | undefined;
  /** The file's text for a host a `${VAR}` gave: named instead of the host (`shownHost`). */
  readonly given?: WrittenAs | undefined;
}

/** Where another port is chosen: the key as written, the variable that overrides it, the flag that overrides both. */
function choosePort(portKey = "platforms.webhook.port"): string {
  return `${portKey}, WEBHOOK_PORT or --port`;
}

/** The command that shows which process listens on `port`. */
export function findListener(port: number): string {
  return process.platform === "linux" ? `ss -ltnp 'sport = :${port}'` : `lsof -nP -iTCP:${port} -sTCP:LISTEN`;
}

/** A busy `port` on an address of this machine, said by what holds it. */
function busyPortHint(port: number | undefined, holder: PortHolder | undefined, choose: string): string {
  if (port === undefined || port === 0) return `the address is in use — choose another port (${choose})`;
  switch (holder?.kind) {
    case "this_home":
      return `the gateway of this SVC_HOME (${holder.home}, pid ${holder.pid}) already listens on port ${port} — stop it with ${
        holder.named
          ? "svc gateway stop"
          : `kill ${holder.pid} (${holder.pidFile} does not name it, so svc gateway stop would not find it)`
      }`;
    case "this_home_unseen":
      return `the gateway of this SVC_HOME (${holder.home}) already listens on port ${port} (its GET /health names the instance ${holder.stateFile} records), ${
        holder.namespace === undefined
          ? `as pid ${holder.pid}, a gateway this process cannot see (another PID namespace's, or another user's)`
          : `as pid ${holder.pid} of another PID namespace (${holder.namespace}), which this process cannot signal`
      } — stop it where it runs (svc gateway stop there: docker exec <container> svc gateway stop, or on the host), or choose another port (${choose})`;
    case "svc":
      return `another svc gateway listens on port ${port} (its GET /health answers as one does, naming an instance this SVC_HOME's gateway.json does not record: it serves another SVC_HOME) — stop that one (svc gateway stop, with its SVC_HOME), or choose another port (${choose})`;
    case "svc_unnamed":
      return `an svc gateway older than this version, or another program answering as one, listens on port ${port} (its GET /health answers with an svc gateway's body but without the Svc-Instance header this version's gateways name themselves by) — find it with ${findListener(port)}, and stop it or choose another port (${choose})`;
    case "other":
      return `another program listens on port ${port} (not an svc gateway: it does not answer GET /health as one does) — find it with ${findListener(port)}, and stop it or choose another port (${choose})`;
    default:
      return `port ${port} is already in use — find what holds it with ${findListener(port)}, and stop it or choose another port (${choose})`;
  }
}

/**
 * What to do when the listener cannot bind: a busy port (said by what holds it), a port this user may not
 * take, or a host that is not this machine's address.
 */
export function listenFailureHint(host: string, failure: ListenFailure = {}): string {
  const { port, inspectPort, code } = failure;
  const choose = choosePort(failure.portKey);
  const hostKey = failure.hostKey ?? "platforms.webhook.host";
  if (port !== undefined && port !== 0 && port === inspectPort)
    return `the inspector (--inspect) already listens on port ${port} — choose another port for one of them: --inspect <port>, or ${choose}`;
  if (code === "EACCES" || code === "EPERM")
    return port !== undefined && port > 0 && port < 1024
      ? `port ${port} is below 1024, where only root or a program given CAP_NET_BIND_SERVICE may listen (${code}) — choose a port from 1024 up (${choose}) and forward ${port} to it (a reverse proxy, a container's published port: -p ${port}:8644), or give node that capability (setcap cap_net_bind_service=+ep on the node binary)`
      : `this user may not listen there (${code}: a security policy such as SELinux refuses it) — choose another port (${choose}), or allow this one in that policy`;
  const shown = hostInHint(host, failure.given);
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return unresolvedHostHint(host, shown, code, hostKey);
  // The address is this machine's, written in a form the literal check does not know (its host name,
  // `::ffff:127.0.0.1`): only the port is taken.
  if (code === "EADDRINUSE") return busyPortHint(port, failure.holder, choose);
  const zones = linkLocalInterfaces(host);
  if (zones.length > 0)
    return `${shown} is a link-local address, which is bound with its interface — write ${zones.map((zone) => `${failure.given === undefined ? host : "<the address>"}%${zone}`).join(" or ")} in ${hostKey} (or --host)`;
  return isLocalAddress(host)
    ? busyPortHint(port, failure.holder, choose)
    : `${shown} is not an address of this machine — set ${hostKey} (or --host) to one of its addresses, 0.0.0.0 or 127.0.0.1`;
}

/** A host name the resolver has no address for (`ENOTFOUND`), or could not ask about (`EAI_AGAIN`). */
function unresolvedHostHint(host: string, shown: string, code: string, hostKey: string): string {
  const fix = `set ${hostKey} (or --host) to one of this machine's addresses, 0.0.0.0 or 127.0.0.1`;
  if (code === "EAI_AGAIN")
    return `${shown} could not be resolved (EAI_AGAIN: the name server did not answer) — check this machine's DNS, or ${fix}`;
  const meant = nearMiss(host, ["localhost"]);
  return `${shown} is no name this machine can resolve to an address (ENOTFOUND: neither DNS nor /etc/hosts has it)${
    meant === undefined ? "" : ` — did you mean ${meant}?`
  } — ${fix}`;
}
