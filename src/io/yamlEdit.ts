import { existsSync, readFileSync, statSync } from "node:fs";
import { type Document, isAlias, isMap, isScalar, parseDocument } from "yaml";
import { yamlSyntaxProblem } from "../config/load.js";
import { SvcError } from "../errors.js";
import { writeFileAtomic } from "./stores/atomicFile.js";
import { withFileLockSync } from "./stores/fileLock.js";
import { parseForEdit, printForEdit } from "./yamlSource.js";

/**
 * Sets keys in a YAML file through the `yaml` Document API, so the user's comments, key order and other
 * settings survive. `path` is a list of keys from the top (`["platforms", "webhook", "port"]`).
 * The file keeps its mode (0600 when new).
 */
export function setYamlValues(
  file: string,
  values: ReadonlyArray<readonly [readonly string[], unknown]>,
): void {
  withFileLockSync(file, () => setYamlValuesLocked(file, values));
}

/** `setYamlValues` for a caller that holds `<file>.lock` already (setup writes config.yaml and .env under it). */
export function setYamlValuesLocked(
  file: string,
  values: ReadonlyArray<readonly [readonly string[], unknown]>,
): void {
  const doc = editedDocument(file, values);
  const mode = existsSync(file) ? statSync(file).mode & 0o777 : 0o600;
  writeFileAtomic(file, printForEdit(doc), mode);
}

/**
 * Throws what `setYamlValues` would refuse the file with (not YAML, a section that is no mapping), writing
 * nothing: asked before a command's questions, so an answer is not typed for a file that cannot take it.
 */
export function checkYamlEditable(file: string, paths: ReadonlyArray<readonly string[]>): void {
  editedDocument(
    file,
    paths.map((path) => [path, null] as const),
  );
}

function editedDocument(
  file: string,
  values: ReadonlyArray<readonly [readonly string[], unknown]>,
): Document {
  const text = existsSync(file) ? readFileSync(file, "utf8") : "";
  // Numbers left alone are written back as in the file (an unquoted id keeps every digit and its "+").
  const doc = parseForEdit(text);
  if (doc.errors.length > 0) {
    // Named as the gateway names it (the line, what to do), not in the parser's words.
    const problem = yamlSyntaxProblem(file, text) ?? `${file}: not valid YAML`;
    throw new SvcError("config_invalid", `${problem} — fix it before running setup`);
  }
  if (doc.contents !== null && !isMap(doc.contents)) {
    throw new SvcError("config_invalid", `${file}: the top level must be a mapping of sections`);
  }
  for (const [path, value] of values) {
    prepareParents(doc, file, path);
    doc.setIn([...path], value);
  }
  return doc;
}

/**
 * A section written with nothing under it (`webhook:` on its own line, as in many starter files) is null:
 * it becomes an empty mapping, keeping its comment. A section of another type is refused by key, since
 * the `yaml` library would only say "Expected YAML collection".
 */
function prepareParents(doc: Document, file: string, path: readonly string[]): void {
  for (let i = 1; i < path.length; i++) {
    const parent = path.slice(0, i);
    const node = doc.getIn(parent, true);
    if (node === undefined || isMap(node)) continue;
    if (isScalar(node) && node.value === null) {
      const map = doc.createNode({});
      if (node.comment) map.commentBefore = node.comment;
      doc.setIn(parent, map);
      continue;
    }
    if (isAlias(node))
      // Editing through it would change the anchored mapping, and every other place that uses it.
      throw new SvcError(
        "config_invalid",
        `${file}: ${parent.join(".")}: is a YAML alias (*${node.source}) — setup edits only a mapping written out there; write the section out in full, or set its keys by hand`,
      );
    // Integers are read as BigInt (ids past 2^53 stay exact), which JSON.stringify cannot print.
    const value = isScalar(node) && typeof node.value === "bigint" ? node.value.toString() : undefined;
    const got = value ?? (isScalar(node) ? JSON.stringify(node.value) : "a list");
    throw new SvcError(
      "config_invalid",
      `${file}: ${parent.join(".")}: expected a mapping, got ${got} — fix it before running setup`,
    );
  }
}

/** Whether `platforms.webhook` keeps its settings under `extra` (where they win). */
export function webhookKeyPath(file: string, key: string): string[] {
  if (!existsSync(file)) return ["platforms", "webhook", key];
  const doc = parseDocument(readFileSync(file, "utf8"));
  return isMap(doc.getIn(["platforms", "webhook", "extra"]))
    ? ["platforms", "webhook", "extra", key]
    : ["platforms", "webhook", key];
}

/**
 * A line that sets a variable as dotenv reads it: `KEY=`, `export KEY=`, or `KEY: ` (dotenv's other form).
 */
const ENV_SETTING = /^(\s*(?:export\s+)?)([\w.-]+)(?:\s*=|:\s)/;

/**
 * Sets `KEY=value` lines in a dotenv file: every existing line that sets the key (also `export KEY=`, which
 * keeps its `export`, and `KEY: value`) is replaced in place — dotenv takes a key's last line, so a later one
 * left alone would undo the change — and new keys are appended; every other line and comment is kept, and so
 * are CRLF line ends. Written atomically with mode 0600.
 */
export function setEnvValues(file: string, values: Readonly<Record<string, string>>): void {
  withFileLockSync(file, () => setEnvValuesLocked(file, values));
}

function setEnvValuesLocked(file: string, values: Readonly<Record<string, string>>): void {
  const text = existsSync(file) ? readFileSync(file, "utf8") : "";
  const lines = text === "" ? [] : text.split("\n");
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  // A file saved with CRLF line ends (each line here keeping its \r) gets its new lines written so too.
  const cr = /\r?\n/.exec(text)?.[0] === "\r\n" ? "\r" : "";
  const wanted = new Map(Object.entries(values));
  const replaced = new Set<string>();
  const out = lines.map((line) => {
    const setting = ENV_SETTING.exec(line);
    const key = setting?.[2];
    const value = key === undefined ? undefined : wanted.get(key);
    if (key === undefined || value === undefined) return line;
    replaced.add(key);
    // The line's `export ` (a file also sourced by a shell, whose programs then see the value) and
    // indentation stay, as does a byte order mark before the first line.
    return `${setting?.[1] ?? ""}${key}=${quoteEnv(value)}${cr}`;
  });
  for (const [key, value] of wanted) if (!replaced.has(key)) out.push(`${key}=${quoteEnv(value)}${cr}`);
  writeFileAtomic(file, `${out.join("\n")}\n`, 0o600);
}

/**
 * A value dotenv reads back unchanged. dotenv unescapes nothing inside quotes (double quotes only expand
 * `\n` and `\r`), so backslash escaping cannot be used: pick a quote character the value does not contain.
 */
function quoteEnv(value: string): string {
  if (/^[A-Za-z0-9_./:@+-]*$/.test(value)) return value;
  if (!value.includes("'")) return `'${value}'`;
  if (!value.includes("`")) return `\`${value}\``;
  // In double quotes a `${NAME}` would be read as a reference to NAME.
  if (!value.includes('"') && !/\\[nr]/.test(value) && !value.includes("${")) return `"${value}"`;
  throw new SvcError(
    "usage",
    "the value contains ', ` and \" (or a \\n sequence or ${) — a .env file cannot hold it; choose another one",
  );
}
