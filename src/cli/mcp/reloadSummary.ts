import type { ReloadSummary, ServerStatus } from "../../io/mcp/statusFile.js";

/**
 * What `svc mcp reload` prints from the gateway's report. A changed server that restarts lazy (`lazy: true`
 * with a schema cache of the new entry) is not reconnected — it connects at its first call — so it is
 * listed apart from the changed servers that were.
 */
export function reloadSummaryText(
  pid: number,
  reload: ReloadSummary,
  servers: readonly ServerStatus[],
): string {
  // A status file of a gateway started before `disabled` was reported has none.
  const disabled = reload.disabled ?? [];
  const isLazy = (name: string) => servers.some((s) => s.name === name && s.state === "lazy");
  const lazy = reload.changed.filter(isLazy);
  const reconnected = reload.changed.filter((name) => !isLazy(name));
  const line = (label: string, names: readonly string[]) =>
    names.length > 0 ? `  ${label}: ${names.join(", ")}\n` : "";
  const text =
    `Gateway (pid ${pid}) reloaded mcp_servers:\n` +
    line("added", reload.added) +
    line("removed", reload.removed) +
    line("reconnected (changed)", reconnected) +
    line("changed, lazy (connects at its first call)", lazy) +
    line("stopped (disabled)", disabled) +
    line("unchanged", reload.unchanged);
  const changes = reload.added.length + reload.removed.length + reload.changed.length + disabled.length;
  return changes === 0 ? `${text}  nothing changed\n` : text;
}
