import { type Alias, isAlias, isMap, isNode, isPair, isScalar, isSeq, type Node, visit } from "yaml";

/**
 * The anchors and aliases of a node in document order (`&base *ar`): two nodes of equal data are written
 * alike only when these are equal too — an alias that took its anchor's copy (the anchored entry removed by
 * `svc mcp remove`) reads the same as before, yet its text `*base` no longer resolves.
 */
export function anchorsOf(node: Node | null): string {
  if (node === null) return "";
  const marks: string[] = [];
  visit(node, {
    Node(_, item) {
      if (isAlias(item)) marks.push(`*${item.source}`);
      else if (item.anchor) marks.push(`&${item.anchor}`);
    },
  });
  return marks.join(" ");
}

/** An alias of the source and the anchored node that the edited document holds in its place. */
export interface AnchorMove {
  readonly alias: Alias;
  readonly copy: Node;
  /** Whether the alias is inside a flow collection (`{ args: *ar }`), where the copy must be flow too. */
  readonly inFlow: boolean;
}

/**
 * The aliases of `before` that `after` holds as the anchored node itself (the copy made when the anchor's
 * node left the document), when that is all that differs in their shape; undefined when anything else does.
 * Their data must already be known equal.
 */
export function anchorMoves(before: Node | null, after: Node | null): AnchorMove[] | undefined {
  const moves: AnchorMove[] = [];
  return walk(before, after, false, moves) ? moves : undefined;
}

function walk(before: Node | null, after: Node | null, inFlow: boolean, moves: AnchorMove[]): boolean {
  if (before === null || after === null) return before === after;
  if (isAlias(before)) {
    if (isAlias(after)) return after.source === before.source;
    if (after.anchor !== before.source) return false;
    moves.push({ alias: before, copy: after, inFlow });
    return true;
  }
  if (isAlias(after) || (before.anchor ?? "") !== (after.anchor ?? "")) return false;
  if (isScalar(before)) return isScalar(after);
  if ((isMap(before) && isMap(after)) || (isSeq(before) && isSeq(after))) {
    const items: unknown[] = after.items;
    const flow = inFlow || before.flow === true;
    return (
      before.items.length === items.length &&
      before.items.every((item: unknown, at) => {
        const other = items[at];
        if (isPair(item) && isPair(other))
          return (
            walk(node(item.key), node(other.key), flow, moves) &&
            walk(node(item.value), node(other.value), flow, moves)
          );
        return walk(node(item), node(other), flow, moves);
      })
    );
  }
  return false;
}

function node(value: unknown): Node | null {
  return isNode(value) ? value : null;
}
