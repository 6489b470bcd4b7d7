/**
 * Whether `value` nests objects or arrays deeper than `max` levels, `value` itself the first (counted level
 * by level, not recursively: it answers for values far deeper than any recursive walk, `JSON.stringify`
 * included, can go).
 */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  let level: unknown[] = [value];
  for (let depth = 0; level.length > 0; depth++) {
    const next: unknown[] = [];
    for (const item of level) {
      if (item === null || typeof item !== "object") continue;
      if (depth >= max) return true;
      for (const child of Object.values(item))
        if (child !== null && typeof child === "object") next.push(child);
    }
    level = next;
  }
  return false;
}

/**
 * How many levels of objects and arrays `value` nests, `value` itself the first (0 for anything else);
 * counted level by level, as `nestedDeeperThan` does.
 */
export function nestingDepth(value: unknown): number {
  let level: object[] = value !== null && typeof value === "object" ? [value] : [];
  let depth = 0;
  while (level.length > 0) {
    depth++;
    const next: object[] = [];
    for (const item of level)
      for (const child of Object.values(item))
        if (child !== null && typeof child === "object") next.push(child);
    level = next;
  }
  return depth;
}
