/**
 * `keepWhereUnchanged`: what is kept of a parsed tree, brought in line with the tree after it was changed;
 * `carryKept`: to a copy made of a parsed object (`{ ...record, field }`).
 */
import { INSIDE, Keeps, Kept } from "./kept.js";

/**
 * Gives `copy`, made of the parsed object `from` (`{ ...from, next_run }`), what is kept of `from` (its
 * numbers' texts, its key order), for `keepWhereUnchanged` to keep where the copy still holds the same.
 */
export function carryKept(from: object, copy: object): void {
  const kept = Keeps.get(from);
  if (kept === undefined || kept === INSIDE || Keeps.get(copy) !== undefined) return;
  if (Array.isArray(from) !== Array.isArray(copy)) return;
  const carried = new Kept(kept.order);
  if (kept.items !== undefined) carried.items = [...kept.items];
  for (const [key, text] of kept.namedTexts()) carried.setText(-1, key, text);
  Keeps.set(copy, carried);
}

/**
 * After a tree `parseJson` built was changed in place (a record added or replaced, a number set, a key
 * removed), drops what is kept of it that no longer holds, so that `stringifyJson` writes the tree as it is
 * now and everything left unchanged as it was written: a number's text whose value changed (or that is no
 * number any more), and of a key order the keys removed (keys added go last). A container holding
 * something kept, `value` included, is marked for `stringifyJson`'s slower serialization (a parsed record
 * moved into a new object). Walked with a stack of its own, not the call stack: a tree nested thousands of
 * levels deep (which JSON.parse reads) is walked as any other.
 */
export function keepWhereUnchanged(value: unknown): void {
  if (typeof value !== "object" || value === null) return;
  // Every container, level by level (a parent before its children), with its parent's place in the list.
  const nodes: object[] = [value];
  const parents: number[] = [-1];
  for (let i = 0; i < nodes.length; i++)
    for (const child of Object.values(nodes[i] as object))
      if (typeof child === "object" && child !== null) {
        nodes.push(child);
        parents.push(i);
      }
  // Whether anything is kept below each container: its children, later in the list, are settled first.
  const inside = new Uint8Array(nodes.length);
  for (let i = nodes.length - 1; i >= 0; i--) {
    const node = nodes[i] as object;
    const kept = Keeps.get(node);
    const here = (kept !== undefined && kept !== INSIDE && keptStillHolds(node, kept)) || inside[i] === 1;
    if (!here) continue;
    if (kept === undefined) Keeps.set(node, INSIDE);
    const parent = parents[i] as number;
    if (parent >= 0) inside[parent] = 1;
  }
}

/** Drops what `kept` holds of `node` that no longer holds; whether anything is left. */
function keptStillHolds(node: object, kept: Kept): boolean {
  const holder = node as Record<string, unknown>;
  const unchanged = (key: string, text: string): boolean => {
    const item = Object.hasOwn(holder, key) ? holder[key] : undefined;
    return typeof item === "number" && Number(text) === item;
  };
  if (kept.items !== undefined)
    kept.items.forEach((text, index) => {
      if (text !== undefined && !unchanged(String(index), text)) kept.dropText(index, "");
    });
  for (const [key, text] of kept.namedTexts()) if (!unchanged(key, text)) kept.dropText(-1, key);
  if (kept.order !== undefined) {
    const present = kept.order.filter((key) => Object.hasOwn(holder, key));
    const listed = Object.keys(holder);
    const known = new Set(present);
    const order = [...present, ...listed.filter((key) => !known.has(key))];
    kept.order = order.every((key, k) => key === listed[k]) ? undefined : order;
  }
  return kept.hasTexts() || kept.order !== undefined;
}
