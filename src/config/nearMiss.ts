/** Edit distance with adjacent transpositions (optimal string alignment): "colaesce" → "coalesce" is 1. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [
    i,
    ...new Array<number>(b.length).fill(0),
  ]);
  for (let j = 1; j <= b.length; j++) (d[0] as number[])[j] = j;
  for (let i = 1; i <= a.length; i++) {
    const row = d[i] as number[];
    const prev = d[i - 1] as number[];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min((prev[j] as number) + 1, (row[j - 1] as number) + 1, (prev[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        row[j] = Math.min(row[j] as number, ((d[i - 2] as number[])[j - 2] as number) + 1);
      }
    }
  }
  return (d[a.length] as number[])[b.length] as number;
}

/**
 * The known key `key` is most likely a misspelling of (at most 2 edits for keys of 4+ characters, 1 for keys of
 * 3: `wrk` for `work`, `prr` for `pr`), if any; a key that differs only in case (`LOG` for `log`, `Sms` for
 * `sms`) is named whatever its length; else the one key it begins with `_` after it (for keys of 4+ characters).
 */
export function nearMiss(key: string, known: Iterable<string>): string | undefined {
  const candidates = [...known];
  const sameLetters = candidates.find((candidate) => candidate.toLowerCase() === key.toLowerCase());
  if (sameLetters !== undefined) return sameLetters;
  if (key.length < 3) return undefined;
  let best: string | undefined;
  let bestDistance = key.length < 4 ? 2 : 3;
  for (const candidate of candidates) {
    const distance = editDistance(key.toLowerCase(), candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  if (best !== undefined) return best;
  // A key written without its unit or kind (`keepalive` for `keepalive_interval`, `idle_timeout` for
  // `idle_timeout_seconds`): the one known key it begins, followed by `_`.
  const lower = key.toLowerCase();
  const longer = key.length < 4 ? [] : candidates.filter((candidate) => candidate.startsWith(`${lower}_`));
  return longer.length === 1 ? longer[0] : undefined;
}
