import { DEFAULT_PROFILE } from "../../config/paths.js";
import type { AgentSettings } from "../../config/sections/agent.js";
import type { Logger } from "../../io/log.js";
import type { RunToRecord } from "../../io/sessions/runJournal.js";
import type { Deliverer } from "../deliver.js";
import type { RunExecutor } from "../runs.js";
import { commandRunner } from "./command.js";
import { echoRunner } from "./echo.js";
import { type AgentRequest, type AgentRunner, DEFAULT_WEBHOOK_TOOLSETS } from "./runner.js";
import { findFirstSkill } from "./skills.js";

export type { AgentRequest, AgentRunner } from "./runner.js";

/** The runner the `agent:` section chooses . */
export function createRunner(agent: AgentSettings): AgentRunner {
  if (agent.provider === "command" && agent.command !== undefined) {
    return commandRunner({ argv: agent.command, timeoutMs: agent.timeout_seconds * 1000 });
  }
  return echoRunner();
}

/** The platform toolset name; listing it in a route's `toolsets` brings the default set back in. */
export const WEBHOOK_TOOLSET = "svc-webhook";

/** Toolsets a run may use; unknown names are dropped and reported. */
export const KNOWN_TOOLSETS: ReadonlySet<string> = new Set([
  ...DEFAULT_WEBHOOK_TOOLSETS,
  "web",
  "terminal",
  "file",
  "code_execution",
  "browser",
  "memory",
  "mcp",
]);

/** A route's `toolsets` replace the default `svc-webhook` set. */
export function runToolsets(
  routeToolsets: readonly string[] | undefined,
  onDropped?: (name: string) => void,
): readonly string[] {
  if (routeToolsets === undefined) return DEFAULT_WEBHOOK_TOOLSETS;
  const kept = new Set<string>();
  for (const name of routeToolsets) {
    if (name === WEBHOOK_TOOLSET) for (const tool of DEFAULT_WEBHOOK_TOOLSETS) kept.add(tool);
    else if (KNOWN_TOOLSETS.has(name)) kept.add(name);
    else onDropped?.(name);
  }
  return [...kept];
}

export interface RunExecutorDeps {
  runner(): AgentRunner;
  readonly deliverer: Deliverer;
  readonly logger: Logger;
  /** The `skills/` directory of a profile. */
  skillsDir(profile: string): string;
  /** Records each run as its own session `webhook:<route>:<delivery_id>` (see io/sessions/runJournal.ts). */
  recordRun?(profile: string, run: RunToRecord): void;
}

/** One agent run for an accepted event: load the skill, run the agent, deliver the reply (even empty or `SKIP`). */
export function createRunExecutor(deps: RunExecutorDeps): RunExecutor {
  // Once per route and name: the route's config is the same on every run, its log need not repeat.
  const warnedToolsets = new Set<string>();
  const warnedSkills = new Set<string>();
  return async (event, signal) => {
    const { route } = event;
    // No skills listed (the common case): no file lookup and no extra await per run.
    let skill: AgentRequest["skill"];
    if (route.skills !== undefined && route.skills.length > 0) {
      const skillsDir = deps.skillsDir(event.profile);
      const found = await findFirstSkill(skillsDir, route.skills);
      skill = found.skill;
      for (const name of found.missing) {
        const key = `${event.profile}\u0000${event.routeName}\u0000${name}`;
        if (warnedSkills.has(key)) continue;
        warnedSkills.add(key);
        deps.logger.warn(
          `[webhook] ${event.routeName}: skill "${name}" not found (no ${skillsDir}/${name}/SKILL.md)${skill === undefined ? "" : `; loaded "${skill.name}" instead`}`,
        );
      }
    }
    const toolsets = runToolsets(route.toolsets, (name) => {
      const key = `${event.routeName}\u0000${name}`;
      if (warnedToolsets.has(key)) return;
      warnedToolsets.add(key);
      deps.logger.warn(`[webhook] ${event.routeName}: unknown toolset "${name}" dropped`);
    });
    const request: AgentRequest = {
      route: event.routeName,
      event: event.event ?? "",
      deliveryId: event.deliveryId,
      prompt: event.prompt,
      toolsets,
      profile: event.profile === DEFAULT_PROFILE ? undefined : event.profile,
      ...(skill === undefined ? {} : { skill }),
    };
    const reply = await deps.runner().run(request, signal);
    deps.recordRun?.(event.profile, {
      route: event.routeName,
      deliveryId: event.deliveryId,
      prompt: event.prompt,
      reply,
    });
    await deps.deliverer.deliver(
      {
        target: route.deliver,
        message: {
          text: reply,
          extra: event.extra,
          route: event.routeName,
          deliveryId: event.deliveryId,
          profile: request.profile,
        },
        mode: "agent",
        mirrorToSession: route.mirror_to_session,
      },
      signal,
    );
  };
}
