import { join } from "node:path";
import { nearMiss } from "../config/nearMiss.js";
import { shellWord } from "../io/shellWord.js";
import { hiddenValue } from "./argumentValues.js";

const GATEWAY_COMMANDS = ["run", "start", "stop", "status", "setup"] as const;

/**
 * The refusal of `svc gateway <name>` for a name that is no gateway command. `start` is the group's default
 * command, so commander never sees such a name as an unknown command and gives no "Did you mean" of its own,
 * as it does in every other group: a misspelling (`stauts`, `strat`, `Stop`) is named here instead.
 * `home` is the SVC_HOME in effect, when it can be told, for the commands of other tools that svc does
 * without (`restart`, `reload`, `logs`).
 */
export function unknownGatewayCommand(word: string, home?: string): string {
  // `svc gateway WEBHOOK_SECRET=...`: a variable meant for the environment, whose value is not repeated.
  const hidden = hiddenValue(word);
  const name = hidden?.name ?? word;
  const instead = hidden === undefined ? insteadOf(name.toLowerCase(), home) : undefined;
  if (instead !== undefined) return `unknown command 'gateway ${name}' — ${instead}`;
  const meant = nearMiss(name, GATEWAY_COMMANDS);
  const hint = meant === undefined ? "" : ` — did you mean svc gateway ${meant}?`;
  return `unknown command 'gateway ${name}'${hidden?.note ?? ""}${hint} — use svc gateway run|start|stop|status|setup (svc gateway --help)`;
}

/**
 * What does the job of a command other tools have (`systemctl restart`, `docker logs`): `restart` is one
 * letter from `start`, whose "did you mean" would send a user whose gateway runs to `already running`.
 */
function insteadOf(name: string, home: string | undefined): string | undefined {
  const pidFile = home === undefined ? "$SVC_HOME/gateway.pid" : shellWord(join(home, "gateway.pid"));
  const hup = `kill -HUP $(cat ${pidFile})`;
  switch (name) {
    case "restart":
      return `svc gateway has no restart: run svc gateway stop, then svc gateway start (a change to config.yaml or .env needs no restart unless the gateway's log says so: ${hup} reloads them)`;
    case "reload":
      return `the gateway reloads config.yaml and .env on SIGHUP: ${hup}`;
    case "log":
    case "logs": {
      const logs = home === undefined ? "$SVC_HOME/logs" : join(home, "logs");
      return `svc gateway has no ${name} command: the gateway writes its log to ${shellWord(join(logs, "gateway.log"))} (tail -f it); svc gateway start keeps the gateway's own output in ${shellWord(join(logs, "gateway.out"))}`;
    }
    default:
      return undefined;
  }
}
