/**
 * The order `config.yaml` writes its `mcp_servers` in. It decides which of two servers keeps a tool name
 * both register (the one listed first), and is the order svc lists them in. A JavaScript object does not
 * keep it for every name: a key that reads as an array index (`7`, `42`) is listed before all others, so
 * the order written is kept beside the entries (a property no iteration sees). Pure.
 */
const WRITTEN_ORDER = Symbol("mcp_servers written order");

type Servers<T> = Readonly<Record<string, T>>;

/** Records the names as the file writes them on `servers` (the loaded mapping) and returns it. */
export function withWrittenOrder<T extends object>(servers: T, names: readonly string[]): T {
  Object.defineProperty(servers, WRITTEN_ORDER, { value: [...names], enumerable: false });
  return servers;
}

/** The server names in the order `config.yaml` writes them (the object's own order when none was recorded). */
export function serverNames(servers: Servers<unknown>): string[] {
  const keys = Object.keys(servers);
  const written = (servers as { readonly [WRITTEN_ORDER]?: readonly string[] })[WRITTEN_ORDER];
  if (written === undefined) return keys;
  const present = new Set(keys);
  const ordered = [...new Set(written.filter((name) => present.has(name)))];
  const listed = new Set(ordered);
  // A name the recorded order lacks (merged in with `<<:`) keeps its place after them.
  return [...ordered, ...keys.filter((name) => !listed.has(name))];
}

/** `Object.entries(servers)` in the order `config.yaml` writes them. */
export function serverEntries<T>(servers: Servers<T>): Array<[string, T]> {
  return serverNames(servers).map((name) => [name, servers[name] as T]);
}
