import { type Alias, type Document, isAlias, isNode, type Node, visit } from "yaml";

/** The node an alias names, as YAML resolves it: the last node before it with that anchor. */
export type AliasTargets = (alias: Alias) => Node | undefined;

/**
 * Every alias of `doc` resolved in one visit. yaml's `Alias.resolve(doc)` without a resolving context walks
 * the whole document on each call, so resolving each alias so costs the square of the document's size (990
 * routes merging 10 anchors took seconds to load). An alias not in the document as visited (one a clone
 * made later holds) is resolved by yaml itself.
 */
export function aliasTargets(doc: Document): AliasTargets {
  const targets = new Map<Alias, Node | undefined>();
  const anchors = new Map<string, Node>();
  visit(doc, {
    Node(_key, node) {
      if (isAlias(node)) targets.set(node, anchors.get(node.source));
      else if (isNode(node) && node.anchor) anchors.set(node.anchor, node);
    },
  });
  return (alias) => (targets.has(alias) ? targets.get(alias) : (alias.resolve(doc) as Node | undefined));
}
