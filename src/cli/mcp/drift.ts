/**
 * The note `svc mcp list` adds under a running gateway's status when `config.yaml` names other servers
 * than the gateway runs — the file was edited and `svc mcp reload` not run yet — or undefined when the
 * names agree. (An entry changed under the same name is not seen here: the status carries no entry.)
 */
export function configDriftNote(
  configured: readonly string[],
  running: readonly string[],
): string | undefined {
  const notLoaded = configured.filter((name) => !running.includes(name));
  const removed = running.filter((name) => !configured.includes(name));
  if (notLoaded.length === 0 && removed.length === 0) return undefined;
  const parts = [
    ...(notLoaded.length > 0 ? [`not loaded yet: ${notLoaded.join(", ")}`] : []),
    ...(removed.length > 0 ? [`no longer in config.yaml: ${removed.join(", ")}`] : []),
  ];
  return `(config.yaml has changed since the gateway loaded it — ${parts.join("; ")}; svc mcp reload applies it)`;
}
