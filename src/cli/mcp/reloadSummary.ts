import { shownName } from "../../io/mcp/shownName.js";
import type { ReloadSummary, ServerStatus } from "../../io/mcp/statusFile.js";
import { detail } from "./statusDetail.js";

/**
 * A reload's report as `svc mcp reload` reads it: `removedLater`, the servers whose connect it waited for that a
 * later reload removed from mcp_servers before they connected, and `replacedLater`, those whose connect a later
 * reload ended as it changed their entry, and which it connects again (its report waits for that connect:
 * `outcomesSince`).
 */
export type ReadReload<R extends ReloadSummary = ReloadSummary> = R & {
  readonly removedLater?: readonly string[];
  readonly replacedLater?: readonly string[];
};

/**
 * Whether the report waits for `name`'s connect (its outcome is `connecting`): only such a server's `stopped`
 * is a connect under way that a later reload (or the gateway's stop) ended. One the reload started no connect
 * for (lazy, enabled: false) is stopped at the gateway's stop too. A report without outcomes (from a gateway
 * started before they were reported) cannot tell the two apart: a server it added, changed, enabled or
 * retried is taken for one whose connect it waits for, as before outcomes were reported.
 */
export function awaitedConnect(reload: ReloadSummary, name: string): boolean {
  const outcomes = reload.outcomes;
  if (outcomes === undefined)
    return (
      reload.added.includes(name) ||
      reload.changed.includes(name) ||
      (reload.enabled ?? []).includes(name) ||
      (reload.retried ?? []).includes(name)
    );
  return Object.hasOwn(outcomes, name) && outcomes[name]?.state === "connecting";
}

/**
 * Of the servers the reload added, enabled, changed or retried, those whose connect it waited for that a later
 * reload ended (stopped) before they connected, when that reload has not reported yet: whether it changed their
 * entry and connects them again or removed them is not known before its report (`outcomesSince`), so they are
 * not connected. Those the gateway's stop ended (`reload.endedByStop`) are not among them.
 */
export function endedByLater(reload: ReadReload, statuses: readonly ServerStatus[]): string[] {
  const servers = asFirstOutcomes(reload, statuses);
  const stopped = new Set(reload.endedByStop ?? []);
  const removed = new Set(reload.removedLater ?? []);
  const own = [...reload.added, ...(reload.enabled ?? []), ...reload.changed, ...(reload.retried ?? [])];
  return own.filter(
    (name) =>
      !stopped.has(name) &&
      !removed.has(name) &&
      servers.find((s) => s.name === name)?.state === "stopped" &&
      awaitedConnect(reload, name),
  );
}

/**
 * The servers as the reload's report says the connects it waited for first ended: one that connected or
 * failed is shown so, whatever it is by now (a server crashing right after each handshake is reconnecting
 * most of the time; one that failed may be connecting again in its backoff retry). One the reload started no
 * connect for is shown as the report says it was then (lazy, or enabled: false), whatever it is by now (the
 * gateway's stop makes it stopped). A connect still under way, a server the report gives no outcome, and a
 * report without outcomes (from a gateway started before they were reported) leave its status as it is.
 */
export function asFirstOutcomes(reload: ReloadSummary, servers: readonly ServerStatus[]): ServerStatus[] {
  const outcomes = reload.outcomes ?? {};
  return servers.map((status) => {
    const outcome = Object.hasOwn(outcomes, status.name) ? outcomes[status.name] : undefined;
    if (outcome === undefined || outcome.state === "connecting") return status;
    const { lastError: _, ...rest } = status;
    return outcome.state === "failed" && outcome.lastError !== undefined
      ? { ...rest, state: outcome.state, lastError: outcome.lastError }
      : { ...rest, state: outcome.state };
  });
}

/**
 * What `svc mcp reload` prints from the gateway's report. A changed server that restarts lazy (`lazy: true`
 * with a schema cache of the new entry) is not reconnected — it connects at its first call — so it is
 * listed apart from the changed servers that were; an added server that did not connect (disabled, or
 * lazy) says so, a server changed from `enabled: false` is listed as enabled (it never was connected), and
 * a changed server that stays `enabled: false` is listed as such, not as reconnected or stopped; a changed lazy
 * server that had not connected yet and is connected now is listed as such, not as reconnected. An
 * unchanged server that was not connected (failed, reconnecting, or connecting in a backoff retry) is tried
 * again by the reload: it is listed apart from the unchanged ones, with the outcome of that try. Each connect
 * the reload waited for is listed by how it first ended (`asFirstOutcomes`); one a later reload ended as it
 * replaced the server's entry by how that reload's connect ended (the command waits for it), or as still
 * connecting, never as connected; one a later reload removed before it connected (`reload.removedLater`) as
 * not connected, as is one a later reload ended whose report had not come when the wait ended (`endedByLater`:
 * removed or replaced, not known yet). A server
 * the gateway's stop ended before it connected (`reload.endedByStop`) is listed as not connected, with why.
 */
export function reloadSummaryText(
  pid: number,
  reload: ReadReload,
  statuses: readonly ServerStatus[],
  heading = `Gateway (pid ${pid}) reloaded mcp_servers:`,
): string {
  const servers = asFirstOutcomes(reload, statuses);
  // A status file of a gateway started before `disabled` was reported has none.
  const disabled = reload.disabled ?? [];
  // One the reload started no connect for is lazy or skipped as the report says, also once the gateway's stop
  // has left it out of the status file.
  const startedNone = (name: string) => {
    const state = Object.hasOwn(reload.outcomes ?? {}, name) ? reload.outcomes?.[name]?.state : undefined;
    return state === "lazy" || state === "skipped" ? state : undefined;
  };
  const stateOf = (name: string) => servers.find((s) => s.name === name)?.state ?? startedNone(name);
  const isLazy = (name: string) => stateOf(name) === "lazy";
  // A server the reload (re)started whose connect failed is not listed as connected: it gets a line of
  // its own with why, as svc mcp list's DETAIL says it.
  // So is one whose connect the gateway's stop ended before it connected (its state is stopped, or gone).
  const endedByStop = reload.endedByStop ?? [];
  const stopped = (name: string) => endedByStop.includes(name);
  // One a later reload removed before it connected is not connected either, nor one whose connect a later
  // reload ended that has not reported yet.
  const removedLater = (name: string) => reload.removedLater?.includes(name) === true;
  const laterEnded = endedByLater(reload, statuses);
  const endedLater = (name: string) => laterEnded.includes(name);
  const failed = (name: string) =>
    !stopped(name) && !removedLater(name) && !endedLater(name) && stateOf(name) === "failed";
  const notOk = (name: string) => failed(name) || stopped(name) || removedLater(name) || endedLater(name);
  const retried = reload.retried ?? [];
  const notConnected = [
    ...reload.added.filter(notOk).map((name) => [name, "added"] as const),
    ...(reload.enabled ?? []).filter(notOk).map((name) => [name, "enabled"] as const),
    ...reload.changed.filter(notOk).map((name) => [name, "changed"] as const),
    ...retried.filter(notOk).map((name) => [name, "retried"] as const),
  ].map(([name, how]) => {
    if (removedLater(name))
      return `not connected: ${shownName(name)} (${how}) — a later reload removed it from mcp_servers before it connected`;
    if (stopped(name))
      return `not connected: ${shownName(name)} (${how}) — the gateway began stopping before it connected`;
    if (endedLater(name))
      return `not connected: ${shownName(name)} (${how}) — a later reload ended its connect before it connected (that reload had not reported when the wait ended)`;
    const status = servers.find((s) => s.name === name) as ServerStatus;
    const why = detail(status);
    return `failed to connect: ${shownName(name)} (${how})${why === "" ? "" : ` — ${why}`}`;
  });
  // Still connecting when the command stopped waiting (--wait): said, not taken for connected; one whose
  // connect a later reload ended as it replaced the server's entry, with that reload's connect under way, says so.
  const connecting = (name: string) =>
    stateOf(name) !== "connecting"
      ? shownName(name)
      : reload.replacedLater?.includes(name) === true
        ? `${shownName(name)} (still connecting: a later reload changed its entry before it connected, and connects it again)`
        : `${shownName(name)} (still connecting)`;
  // Tried again: connected now, or still at it (one still closing its lost session shows reconnecting).
  const tried = retried
    .filter((name) => !notOk(name))
    .map((name) =>
      stateOf(name) === "reconnecting" ? `${shownName(name)} (still connecting)` : connecting(name),
    );
  // An added server with enabled: false connects nothing, and a lazy one connects at its first call.
  const added = reload.added
    .filter((name) => !notOk(name))
    .map((name) =>
      stateOf(name) === "skipped"
        ? `${shownName(name)} (enabled: false, not connected)`
        : isLazy(name)
          ? `${shownName(name)} (lazy: connects at its first call)`
          : connecting(name),
    );
  // Changed from enabled: false: started now, never connected before (a lazy one connects at its first call).
  const enabled = (reload.enabled ?? [])
    .filter((name) => !notOk(name))
    .map((name) =>
      isLazy(name) ? `${shownName(name)} (lazy: connects at its first call)` : connecting(name),
    );
  const lazy = reload.changed.filter(isLazy);
  // Changed but still enabled: false: nothing was stopped or connected.
  const stillOff = reload.changed.filter((name) => stateOf(name) === "skipped");
  // A lazy server not called yet had no connection: the reload started it, it did not reconnect it.
  const started = reload.started ?? [];
  const connectedNow = reload.changed.filter(
    (name) => !isLazy(name) && stateOf(name) !== "skipped" && !notOk(name),
  );
  const reconnected = connectedNow.filter((name) => !started.includes(name)).map(connecting);
  const startedNow = connectedNow.filter((name) => started.includes(name)).map(connecting);
  // Names the reload's report gives as they are (removed, stopped, unchanged, changed lazy or still off)
  // are shown as shownName shows them; the others above already are.
  const line = (label: string, names: readonly string[]) =>
    names.length > 0 ? `  ${label}: ${names.join(", ")}\n` : "";
  const shown = (names: readonly string[]) => names.map(shownName);
  const text =
    `${heading}\n` +
    line("added", added) +
    line("removed", shown(reload.removed)) +
    line("enabled (was enabled: false)", enabled) +
    line("reconnected (changed)", reconnected) +
    line("changed, connected (was lazy, not connected before)", startedNow) +
    line("changed, lazy (connects at its first call)", shown(lazy)) +
    line("changed, still enabled: false (not connected)", shown(stillOff)) +
    line("stopped (disabled)", shown(disabled)) +
    line("retried (was not connected)", tried) +
    notConnected.map((text) => `  ${text}\n`).join("") +
    line("unchanged", shown(reload.unchanged.filter((name) => !retried.includes(name))));
  const changes =
    reload.added.length +
    reload.removed.length +
    reload.changed.length +
    disabled.length +
    (reload.enabled ?? []).length +
    retried.length;
  return changes === 0 ? `${text}  nothing changed\n` : text;
}
