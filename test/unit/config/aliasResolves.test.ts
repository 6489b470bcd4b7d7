import { afterEach, expect, it, vi } from "vitest";
import { Alias, LineCounter, parseDocument } from "yaml";
import { loadConfig } from "../../../src/config/load.js";
import { aliasTargets } from "../../../src/config/yamlAliases.js";
import { refuseRecursiveAliases } from "../../../src/config/yamlLeadingChars.js";
import { tempHome } from "../../helpers/home.js";

afterEach(() => vi.restoreAllMocks());

/**
 * yaml's Alias.resolve(doc) without a resolving context walks the whole document on each call: a check that
 * resolves each alias so loads a config of many aliases in time growing with the square of its size (990
 * routes merging 10 anchors took seconds). The checks resolve every alias from one visit instead: these
 * count the walking calls (none), not the time.
 */
function manyMerges(anchors: number, routes: number): string {
  const lines = ["platforms:", "  webhook:", "    secret: s", "    routes:"];
  for (let a = 0; a < anchors; a++) {
    lines.push(`      a${a}: {filters: [&hf${a} {field: headers.X-Flag, equals: True}]}`);
    for (let r = 0; r < routes; r++)
      lines.push(`      r${a}_${r}: {filters: [{<<: *hf${a}, equals: False}]}`);
  }
  return `${lines.join("\n")}\n`;
}

/** Counts the calls of Alias.resolve given no resolving context (each a walk of the whole document). */
function walkingResolves(): { count: number } {
  const calls = { count: 0 };
  const resolve = Alias.prototype.resolve;
  vi.spyOn(Alias.prototype, "resolve").mockImplementation(function (this: Alias, ...args) {
    if (args[1] === undefined) calls.count++;
    return resolve.apply(this, args);
  });
  return calls;
}

it("refuseRecursiveAliases resolves the aliases of a config without walking the document for each", () => {
  const text = manyMerges(3, 20);
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, merge: true });
  const calls = walkingResolves();
  refuseRecursiveAliases(doc, "config.yaml", lines);
  expect(calls.count).toBe(0);
});

it("aliasTargets resolves each alias to the anchor YAML does: the last one set before it", () => {
  const doc = parseDocument("a: &x 1\nb: *x\nc: &x 2\nd: *x\ne: [&y {k: *y}]\n", { merge: true });
  const targets = aliasTargets(doc);
  const contents = doc.contents as unknown as { items: { value: unknown }[] };
  const value = (i: number) => contents.items[i]?.value as Alias;
  expect(targets(value(1))).toBe(contents.items[0]?.value);
  expect(targets(value(3))).toBe(contents.items[2]?.value);
  expect(targets(value(1))).toBe(value(1).resolve(doc));
  expect(targets(value(3))).toBe(value(3).resolve(doc));
});

it("loading a config whose filters merge anchors resolves no alias by walking the document", () => {
  const home = tempHome();
  try {
    home.write("config.yaml", manyMerges(3, 20));
    const calls = walkingResolves();
    const routes = loadConfig({ home: home.dir, env: {} }).config.platforms.webhook.routes;
    expect(calls.count).toBe(0);
    expect(routes.r2_19?.filters).toEqual([{ field: "headers.X-Flag", equals: "False" }]);
  } finally {
    home.cleanup();
  }
});
