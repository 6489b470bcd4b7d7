/**
 * Fails (exit 1) on an import cycle among the modules of src/ or an import that crosses a layer rule
 * (ARCHITECTURE.md): `streams/` and `machines/` import nothing from `io/`; `io/` imports nothing from
 * `cli/`, `actors/` or `gateway/`. Every import counts, `import type` and `import()` included: a type
 * cycle is still two files that cannot be understood one without the other.
 *
 * Usage: node --import tsx scripts/checkImports.ts [srcDir]
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import ts from "typescript";

/** A module's layer: its first folder under `srcDir` (`errors.ts`, `clock.ts` and `requiredAtFirstUse.ts` at the top are shared by all). */
const layerOf = (srcDir: string, file: string): string => {
  const parts = relative(srcDir, file).split("/");
  return parts.length === 1 ? "" : (parts[0] ?? "");
};

/** Layers each layer must not import. */
const FORBIDDEN: Record<string, readonly string[]> = {
  streams: ["io", "actors", "cli", "gateway"],
  machines: ["io", "actors", "cli", "gateway"],
  config: ["actors", "cli", "gateway"],
  io: ["cli", "actors", "gateway"],
  actors: ["cli", "gateway"],
  agent: ["cli", "gateway"],
  gateway: ["cli"],
  state: ["cli", "gateway"],
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

/** The relative module specifiers a file imports (static, re-exports, dynamic), resolved to .ts paths. */
function importsOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, false);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier !== undefined &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      found.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      found.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found
    .filter((spec) => spec.startsWith("."))
    .map((spec) => resolve(dirname(file), spec.replace(/\.js$/, ".ts")));
}

/** The tree's modules and every cycle and layer crossing among them, one line each. */
export function importProblems(srcDir: string): { modules: number; problems: string[] } {
  const files = sourceFiles(srcDir);
  const graph = new Map(files.map((file) => [file, importsOf(file).filter((to) => to !== file)]));
  const problems: string[] = [];
  const name = (file: string) => relative(srcDir, file);

  for (const [from, targets] of graph) {
    const banned = FORBIDDEN[layerOf(srcDir, from)] ?? [];
    for (const to of targets) {
      if (banned.includes(layerOf(srcDir, to))) {
        problems.push(
          `layer: ${name(from)} imports ${name(to)} (${layerOf(srcDir, from)}/ must not import ${layerOf(srcDir, to)}/)`,
        );
      }
    }
  }

  // Tarjan's strongly connected components: every component of more than one file is a cycle.
  let index = 0;
  const indices = new Map<string, number>();
  const lowLinks = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  function connect(file: string): void {
    indices.set(file, index);
    lowLinks.set(file, index);
    index += 1;
    stack.push(file);
    onStack.add(file);
    for (const to of graph.get(file) ?? []) {
      if (!graph.has(to)) continue;
      if (!indices.has(to)) {
        connect(to);
        lowLinks.set(file, Math.min(lowLinks.get(file) ?? 0, lowLinks.get(to) ?? 0));
      } else if (onStack.has(to)) {
        lowLinks.set(file, Math.min(lowLinks.get(file) ?? 0, indices.get(to) ?? 0));
      }
    }
    if (lowLinks.get(file) !== indices.get(file)) return;
    const component: string[] = [];
    for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
      onStack.delete(member);
      component.push(member);
      if (member === file) break;
    }
    if (component.length > 1) problems.push(`cycle: ${component.map(name).sort().join(" ↔ ")}`);
  }
  for (const file of files) if (!indices.has(file)) connect(file);
  return { modules: files.length, problems };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const srcDir = resolve(process.argv[2] ?? "src");
  const { modules, problems } = importProblems(srcDir);
  if (problems.length > 0) {
    for (const problem of problems) console.error(problem);
    console.error(`\n${problems.length} import problem(s) in ${srcDir}: see ARCHITECTURE.md (layers)`);
    process.exit(1);
  }
  console.log(`imports: ${modules} modules, no cycle, no layer crossed`);
}
