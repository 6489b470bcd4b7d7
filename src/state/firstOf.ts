/** The first `count` items of `items` (a map read lazily stops at the length it had when reached). */
export function* firstOf<T>(items: Iterable<T>, count: number): Generator<T> {
  if (count <= 0) return;
  for (const item of items) {
    yield item;
    if (--count === 0) return;
  }
}
