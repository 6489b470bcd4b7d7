/**
 * "pr: 3, deploy: 1": how many runs each route has, the busiest first, at most `max` routes named
 * (then "+N more routes"). One log line then stands for a backlog of any size.
 */
export function runsByRoute(runs: readonly { readonly routeName: string }[], max = 10): string {
  const counts = new Map<string, number>();
  for (const run of runs) counts.set(run.routeName, (counts.get(run.routeName) ?? 0) + 1);
  const sorted = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const named = sorted.slice(0, max).map(([route, count]) => `${route}: ${count}`);
  const rest = sorted.length - named.length;
  return rest > 0 ? `${named.join(", ")}, +${rest} more route(s)` : named.join(", ");
}
