import { SvcError } from "../../errors.js";
import { envValue } from "../../io/envValue.js";
import { runProcess } from "../../io/process.js";
import { withSkill } from "./echo.js";
import type { AgentRunner } from "./runner.js";

export interface CommandRunnerOptions {
  readonly argv: readonly string[];
  readonly timeoutMs: number;
  /** Base environment; defaults to the process environment without WEBHOOK_SECRET. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

function baseEnv(source: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(source)) {
    if (value !== undefined && key !== "WEBHOOK_SECRET") env[key] = value;
  }
  return env;
}

/**
 * `provider: command` — runs `agent.command` (an argv list, no shell) with the prompt on stdin; stdout is
 * the reply. The run sees `SVC_ROUTE`, `SVC_EVENT` (empty when none), `SVC_DELIVERY_ID` and
 * `SVC_TOOLSETS` (the run's toolsets, comma-separated: the route's `toolsets` or the `svc-webhook`
 * default), so the operator's agent can enforce what the route allows the run.
 */
export function commandRunner(options: CommandRunnerOptions): AgentRunner {
  const [file, ...args] = options.argv;
  if (file === undefined)
    throw new SvcError("config_invalid", "agent.command: empty — give [executable, args...]");
  const env = baseEnv(options.env ?? process.env);
  return {
    async run(request, signal) {
      const result = await runProcess({
        file,
        args,
        input: request.skill === undefined ? request.prompt : withSkill(request.skill, request.prompt),
        env: {
          ...env,
          SVC_ROUTE: request.route,
          SVC_EVENT: envValue(request.event),
          SVC_DELIVERY_ID: request.deliveryId,
          SVC_TOOLSETS: request.toolsets.join(","),
        },
        timeoutMs: options.timeoutMs,
        signal,
      });
      if (!result.ok) {
        const detail = result.stderr.trim().split("\n").slice(-3).join(" | ");
        throw new SvcError("agent_failed", `agent command ${result.why}${detail ? `: ${detail}` : ""}`);
      }
      return result.stdout.replace(/\n$/, "");
    },
  };
}
