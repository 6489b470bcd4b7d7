import type { TempHome } from "../../helpers/home.js";
import { inProcessBusy, runInProcess } from "../../helpers/inProcessCli.js";
import { type SvcResult, svcEnv, svcProcess } from "./svc.js";

/** How long a start that should be refused may run before the test gives up on it. */
const REFUSAL_MS = 20_000;

/** The process events `gateway run` takes over once its start is under way (src/cli/gateway.ts). */
const HOOKS = ["SIGINT", "SIGTERM", "SIGQUIT", "SIGHUP", "SIGUSR1", "SIGUSR2", "exit"] as const;
const hooks = () => HOOKS.map((event) => process.listenerCount(event)).join(",");

/**
 * `svc gateway run <args>` refused by SVC_HOME's own checks (a file where a directory goes, a directory
 * where a file goes). These come before the command installs a handler, opens its log or claims
 * gateway.pid, so such a start runs in the worker. A refusal found later (config.yaml, the journal, the
 * listener) comes after its signal handlers and ends with process.exit: those spawn, with svc().
 */
export async function refusedGatewayRun(home: TempHome, args: readonly string[]): Promise<SvcResult> {
  const argv = ["gateway", "run", ...args];
  if (process.env.SVC_TEST_CLI === "spawn" || inProcessBusy())
    return svcProcess(home, argv, { timeoutMs: REFUSAL_MS });
  const before = hooks();
  let timer: NodeJS.Timeout | undefined;
  const started = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`svc ${argv.join(" ")} was not refused in ${REFUSAL_MS} ms`)),
      REFUSAL_MS,
    );
  });
  try {
    const result = await Promise.race([runInProcess(argv, svcEnv(home, {})), started]);
    if (hooks() !== before)
      throw new Error(`svc ${argv.join(" ")} was refused only after it installed its process handlers`);
    return result;
  } finally {
    clearTimeout(timer);
  }
}
