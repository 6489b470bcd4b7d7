import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import {
  type Document,
  isCollection,
  isMap,
  isNode,
  isScalar,
  isSeq,
  type Node,
  type Pair,
  parseDocument,
  Scalar,
  visit,
  type YAMLMap,
} from "yaml";
import { isPresent } from "../config/configFileRead.js";
import { readEnvFile } from "../config/envFile.js";
import { EMBEDDED_DEFAULT, WITHOUT_CONFIG, yamlSyntaxProblem } from "../config/load.js";
import { SvcError } from "../errors.js";
import { writeFileAtomic } from "./stores/atomicFile.js";
import { withFileLockSync } from "./stores/fileLock.js";
import { parseForEdit, printForEdit } from "./yamlSource.js";

/**
 * No config.yaml: the gateway runs on the embedded default, with the WEBHOOK_* variables of `.env` over it; a
 * file holding only mcp_servers would turn its webhook adapter off, so the new file starts from that default.
 * A port `.env` sets (as `svc gateway setup --port` writes it) is left out of the file, so `.env` still
 * decides it, and the comment says what applied.
 */
function fromEmbeddedDefault(configPath: string, doing: string): Document {
  const envPath = join(dirname(configPath), ".env");
  const env = readEnvFile(envPath, process.env);
  // Blank counts as unset, as the gateway reads them.
  const set = WEBHOOK_ENV.filter((name) => (env[name] ?? "").trim() !== "");
  const base = structuredClone(EMBEDDED_DEFAULT);
  const doc = parseDocument("");
  if (set.length === 0) {
    doc.contents = doc.createNode(base) as never;
    doc.commentBefore =
      ` Created by svc mcp ${doing} from the embedded default (webhook adapter on 127.0.0.1:8644),\n` +
      " which applied while there was no config.yaml. See docs/configuration.md.";
    return doc;
  }
  const { port, ...webhook } = base.platforms.webhook;
  const portFromEnv = set.includes("WEBHOOK_PORT");
  doc.contents = doc.createNode({
    platforms: { webhook: portFromEnv ? webhook : { ...webhook, port } },
  }) as never;
  const values = set.map((name) => `${name}=${env[name]?.trim()}`).join(", ");
  doc.commentBefore =
    ` Created by svc mcp ${doing} from what applied while there was no config.yaml: the embedded\n` +
    ` default (webhook adapter on ${portFromEnv ? "127.0.0.1" : "127.0.0.1:8644"}) with ${values} from ${envPath},\n` +
    ` which still applies over this file${portFromEnv ? " (the port is left to it)" : ""}. See docs/configuration.md.`;
  return doc;
}

/** The variables of `.env` that set the webhook adapter's settings the embedded default writes. */
const WEBHOOK_ENV = ["WEBHOOK_ENABLED", "WEBHOOK_PORT"] as const;

/**
 * config.yaml read for an edit by `svc mcp <doing>` (the embedded default when there is none), refused
 * with the gateway's words when it is not YAML, its top level is no mapping or mcp_servers is no mapping.
 * A link to nothing, or to a file behind a directory this user may not look into, is refused as every command
 * refuses it (isPresent), not taken for no file: a new file would replace the link, or fail to be written there.
 */
export function loadForServersEdit(configPath: string, doing: string) {
  if (!isPresent(configPath, WITHOUT_CONFIG)) return fromEmbeddedDefault(configPath, doing);
  // Numbers left alone are written back as in the file (an unquoted id keeps every digit and its "+").
  const text = readFileSync(configPath, "utf8");
  const doc = parseForEdit(text);
  if (doc.errors.length > 0) {
    // Named as the gateway names it (the line, what to do), not in the parser's words.
    const problem = yamlSyntaxProblem(configPath, text) ?? `${configPath}: not valid YAML`;
    throw new SvcError("config_invalid", `${problem} — fix it before running svc mcp ${doing}`);
  }
  if (doc.contents === null) doc.contents = doc.createNode({}) as never;
  if (!isMap(doc.contents)) {
    const top = doc.contents;
    const got = isSeq(top)
      ? "a list"
      : isScalar(top) && typeof top.value !== "string"
        ? String(top.value)
        : JSON.stringify(String(isScalar(top) ? top.value : top));
    throw new SvcError(
      "config_invalid",
      `${configPath}: the top level must be a mapping of sections (platforms:, agent:, gateway:, mcp_servers:), got ${got} — fix it before running svc mcp ${doing}`,
    );
  }
  const servers = doc.get("mcp_servers");
  if (servers !== undefined && servers !== null && !isMap(servers))
    throw new SvcError(
      "config_invalid",
      `${configPath}: mcp_servers is not a mapping — fix it before running svc mcp ${doing}`,
    );
  return doc;
}

/** Writes the file, keeping its mode; one that now holds a credential loses every group and other bit. */
function write(configPath: string, text: string, holdsCredential = false): void {
  const kept = existsSync(configPath) ? statSync(configPath).mode & 0o777 : 0o600;
  writeFileAtomic(configPath, text, holdsCredential ? kept & 0o700 : kept);
}

/**
 * A server's name as svc reads it from `config.yaml`: the key's text as written, so `007:`, `1e3:` or
 * `True:` (a number or a boolean to YAML) is the server `007`, `1e3`, `True` — not `7`, `1000`, `true`.
 */
export function serverName(key: unknown): string {
  if (!isScalar(key)) return String(key);
  if (typeof key.value !== "string" && key.type === Scalar.PLAIN && typeof key.source === "string")
    return key.source;
  return String(key.value);
}

/** The pair of `mcp_servers.<name>` (its key read as svc reads it), if there is one. */
export function serverPair(servers: YAMLMap, name: string): Pair | undefined {
  return servers.items.find((pair) => serverName(pair.key) === name);
}

/**
 * The `mcp_servers` mapping to add entries to, made when the key is missing or null (`mcp_servers: ~  # none
 * yet` keeps its comment). An empty one (`mcp_servers: {}`, as svc mcp remove leaves it) is turned to block
 * style, so the servers added go one key a line, not `{ b: { command: node, args: [ x ] } }`.
 */
export function serversMap(doc: Document, configPath: string): YAMLMap {
  let map = doc.get("mcp_servers");
  if (!isMap(map)) {
    const created = doc.createNode({});
    const was = doc.get("mcp_servers", true);
    if (isScalar(was) && was.comment) created.commentBefore = was.comment;
    doc.set("mcp_servers", created);
    map = created;
  }
  if (!isMap(map)) throw new SvcError("config_invalid", `${configPath}: mcp_servers is not a mapping`);
  if (map.items.length === 0) {
    // `mcp_servers: {}  # none yet`: the comment would be lost after the entries; it goes above them.
    if (map.flow && map.comment) {
      map.commentBefore = map.comment;
      map.comment = null;
    }
    map.flow = false;
  }
  return map;
}

/**
 * Before an entry's node leaves the document (`svc mcp remove`, a replacing `add --force` or `import
 * --force`): an anchor in it that other entries refer to (`a: &base {...}`, then `b: *base` or
 * `<<: *base`) would be left undefined, which the yaml library refuses to write ("Unresolved alias").
 * The first such alias takes a copy of the anchored node, anchor included, so it and the aliases after it
 * keep the settings they had.
 */
function keepAliasesOf(doc: Document, leaving: unknown): void {
  if (!isNode(leaving)) return;
  const anchored: Node[] = [];
  visit(leaving, {
    Node(_, node) {
      if (node.anchor) anchored.push(node);
    },
  });
  for (const target of anchored) {
    let copied = false;
    visit(doc, {
      Alias(_, alias, path) {
        if (copied || path.includes(leaving) || alias.resolve(doc) !== target) return;
        copied = true;
        const copy = target.clone() as Node;
        // The comment on the alias's line stays there (a block mapping's would go under its last key).
        if (alias.comment && !(isCollection(copy) && !copy.flow)) copy.comment = alias.comment;
        return copy;
      },
    });
  }
}

/**
 * Adds `mcp_servers.<name>` entries to config.yaml in one write (under the file lock, atomically), keeping
 * comments and layout. A name that exists is left alone unless `replace`; the names skipped are returned.
 */
export function addServers(
  configPath: string,
  entries: Readonly<Record<string, Record<string, unknown>>>,
  options: { replace?: boolean; doing: string; holdsCredential?: boolean },
): string[] {
  return withFileLockSync(configPath, () => {
    const doc = loadForServersEdit(configPath, options.doing);
    const skipped: string[] = [];
    const map = serversMap(doc, configPath);
    for (const [name, entry] of Object.entries(entries)) {
      const pair = serverPair(map, name);
      if (pair !== undefined && options.replace !== true) {
        skipped.push(name);
        continue;
      }
      keepAliasesOf(doc, pair?.value);
      if (pair !== undefined) pair.value = doc.createNode(entry);
      else map.set(name, doc.createNode(entry));
    }
    if (skipped.length < Object.keys(entries).length)
      write(configPath, printForEdit(doc), options.holdsCredential === true);
    return skipped;
  });
}

/**
 * Removes `mcp_servers.<name>`; false when there is no such entry, or no config.yaml (nothing is written). A
 * config.yaml link to nothing or into a directory this user may not look into is refused (isPresent).
 */
export function removeServer(configPath: string, name: string): boolean {
  if (!isPresent(configPath, WITHOUT_CONFIG)) return false;
  return withFileLockSync(configPath, () => {
    const doc = loadForServersEdit(configPath, "remove");
    const servers = doc.get("mcp_servers");
    const pair = isMap(servers) ? serverPair(servers, name) : undefined;
    if (!isMap(servers) || pair === undefined) return false;
    keepAliasesOf(doc, pair.value);
    servers.items.splice(servers.items.indexOf(pair), 1);
    write(configPath, printForEdit(doc));
    return true;
  });
}
