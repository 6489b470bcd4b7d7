import { isMap } from "yaml";
import { SvcError } from "../../errors.js";
import { loadForServersEdit, serverName, serverPair, serversMap } from "../mcpServersEdit.js";
import { writeFileAtomic } from "../stores/atomicFile.js";
import { withFileLockSync } from "../stores/fileLock.js";
import { printForEdit } from "../yamlSource.js";

/** Names already under `mcp_servers` in config.yaml. */
export function existingServerNames(configPath: string): Set<string> {
  const servers = loadForServersEdit(configPath, "install").get("mcp_servers");
  if (!isMap(servers)) return new Set();
  return new Set(servers.items.map((pair) => serverName(pair.key)));
}

/**
 * Adds `mcp_servers.<name>` to config.yaml, keeping comments and layout (yaml Document API), written
 * atomically. Never overwrites an existing server. Without config.yaml the new file starts from the
 * embedded default the gateway ran on (webhook adapter on loopback), which a file holding only
 * `mcp_servers` would silently turn off.
 */
export function addServerToConfig(configPath: string, name: string, entry: Record<string, unknown>): void {
  withFileLockSync(configPath, () => {
    const doc = loadForServersEdit(configPath, "install");
    const servers = serversMap(doc, configPath);
    if (serverPair(servers, name) !== undefined) {
      throw new SvcError(
        "install_link",
        `${configPath}: mcp_servers.${name} already exists — choose another name`,
      );
    }
    servers.set(name, doc.createNode(entry));
    writeFileAtomic(configPath, printForEdit(doc), 0o600);
  });
}
