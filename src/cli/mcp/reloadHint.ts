import type { SvcPaths } from "../../config/paths.js";
import { describeError } from "../../errors.js";
import { recordedState, runningGateway } from "../gatewayLookup.js";

/**
 * The line said after `svc mcp add`, `import`, `install` or `remove` has written config.yaml: `whenRunning`
 * when a gateway runs (it reads the change only at a reload), nothing when none does; for one that is
 * stopping, which ignores a reload, that its next start reads the change. A gateway of another
 * PID namespace (a container and its host sharing SVC_HOME) runs when its /health answers; `svc mcp reload`
 * cannot signal it from here, so the line says where to run it. A gateway.pid that cannot be read is named
 * in the line rather than failing the command: the change is written already, and an exit 1 would have a
 * script try again into "already exists".
 */
export async function reloadHint(paths: SvcPaths, whenRunning: string): Promise<string | undefined> {
  try {
    const running = await runningGateway(paths);
    if (running === undefined) return undefined;
    if (running.elsewhere === undefined) {
      // A gateway that is stopping ignores SIGHUP (svc mcp reload says so): the change waits for its next start.
      const since = recordedState(paths, running.pid)?.stopping_since;
      return since === undefined
        ? whenRunning
        : `Note: the gateway (pid ${running.pid}) is stopping (since ${since}) and ignores a reload: the next start (svc gateway start) reads the change`;
    }
    return `${whenRunning}\nNote: that gateway runs in another PID namespace (pid ${running.pid} there, ${running.elsewhere.namespace}; this command runs in ${running.elsewhere.here}), where svc mcp reload from here cannot signal it: run svc mcp reload where it was started (docker exec <container> svc mcp reload, or on the host).`;
  } catch (err) {
    return `Note: whether a gateway is running is unknown (${describeError(err)}); if one is, it reads the change with svc mcp reload.`;
  }
}
