import { nearMiss } from "../config/nearMiss.js";
import { hiddenValue } from "./argumentValues.js";

const GATEWAY_COMMANDS = ["run", "start", "stop", "status", "setup"] as const;

/**
 * The refusal of `svc gateway <name>` for a name that is no gateway command. `start` is the group's default
 * command, so commander never sees such a name as an unknown command and gives no "Did you mean" of its own,
 * as it does in every other group: a misspelling (`stauts`, `strat`, `Stop`) is named here instead.
 */
export function unknownGatewayCommand(word: string): string {
  // `svc gateway WEBHOOK_SECRET=...`: a variable meant for the environment, whose value is not repeated.
  const hidden = hiddenValue(word);
  const name = hidden?.name ?? word;
  const meant = nearMiss(name, GATEWAY_COMMANDS);
  const hint = meant === undefined ? "" : ` — did you mean svc gateway ${meant}?`;
  return `unknown command 'gateway ${name}'${hidden?.note ?? ""}${hint} — use svc gateway run|start|stop|status|setup (svc gateway --help)`;
}
