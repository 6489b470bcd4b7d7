import type { SvcPaths } from "../../config/paths.js";
import { describeError } from "../../errors.js";
import { runningPid } from "../../io/gatewayState.js";

/**
 * The line said after `svc mcp add`, `import`, `install` or `remove` has written config.yaml: `whenRunning`
 * when a gateway runs (it reads the change only at a reload), nothing when none does. A gateway.pid that
 * cannot be read is named in the line rather than failing the command: the change is written already, and
 * an exit 1 would have a script try again into "already exists".
 */
export function reloadHint(paths: SvcPaths, whenRunning: string): string | undefined {
  try {
    return runningPid(paths) === undefined ? undefined : whenRunning;
  } catch (err) {
    return `Note: whether a gateway is running is unknown (${describeError(err)}); if one is, it reads the change with svc mcp reload.`;
  }
}
