import { existsSync, readFileSync } from "node:fs";
import { isMap, parseDocument } from "yaml";
import { EMBEDDED_DEFAULT, yamlSyntaxProblem } from "../../config/load.js";
import { SvcError } from "../../errors.js";
import { serverName, serverPair, serversMap } from "../mcpServersEdit.js";
import { writeFileAtomic } from "../stores/atomicFile.js";
import { withFileLockSync } from "../stores/fileLock.js";
import { parseForEdit, printForEdit } from "../yamlSource.js";

function load(configPath: string) {
  const text = existsSync(configPath) ? readFileSync(configPath, "utf8") : "";
  // Numbers left alone are written back as in the file (an unquoted id keeps every digit and its "+").
  const doc = parseForEdit(text);
  if (doc.errors.length > 0) {
    // Named as the gateway names it (the line, what to do), not in the parser's words.
    const problem = yamlSyntaxProblem(configPath, text) ?? `${configPath}: not valid YAML`;
    throw new SvcError("config_invalid", `${problem} — fix it before installing a server`);
  }
  return doc;
}

/** Names already under `mcp_servers` in config.yaml. */
export function existingServerNames(configPath: string): Set<string> {
  const servers = load(configPath).get("mcp_servers");
  if (!isMap(servers)) return new Set();
  return new Set(servers.items.map((pair) => serverName(pair.key)));
}

/**
 * Adds `mcp_servers.<name>` to config.yaml, keeping comments and layout (yaml Document API), written
 * atomically. Never overwrites an existing server.
 */
export function addServerToConfig(configPath: string, name: string, entry: Record<string, unknown>): void {
  withFileLockSync(configPath, () => addServerLocked(configPath, name, entry));
}

/**
 * Without config.yaml the gateway runs on the embedded default (webhook adapter on loopback); a new file
 * holding only `mcp_servers` would silently turn that adapter off, so it starts from that default.
 */
function newConfig() {
  const doc = parseDocument("");
  doc.contents = doc.createNode(structuredClone(EMBEDDED_DEFAULT)) as never;
  doc.commentBefore =
    " Created by svc mcp install from the embedded default (webhook adapter on 127.0.0.1:8644),\n" +
    " which applied while there was no config.yaml. See docs/configuration.md.";
  return doc;
}

function addServerLocked(configPath: string, name: string, entry: Record<string, unknown>): void {
  const doc = existsSync(configPath) ? load(configPath) : newConfig();
  if (doc.contents === null) doc.contents = doc.createNode({}) as never;
  const servers = doc.get("mcp_servers");
  if (servers !== undefined && servers !== null && !isMap(servers)) {
    throw new SvcError(
      "config_invalid",
      `${configPath}: mcp_servers is not a mapping — fix it before installing a server`,
    );
  }
  if (isMap(servers) && serverPair(servers, name) !== undefined) {
    throw new SvcError(
      "install_link",
      `${configPath}: mcp_servers.${name} already exists — choose another name`,
    );
  }
  serversMap(doc, configPath).set(name, doc.createNode(entry));
  writeFileAtomic(configPath, printForEdit(doc), 0o600);
}
