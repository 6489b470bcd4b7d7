import { scrubberFor } from "../../io/credentials.js";
import type { AgentRunner } from "./runner.js";

/**
 * `provider: echo` — the reply is the prompt (with the loaded skill, if any), so everything works without a model.
 * The credentials svc has loaded (`loadedCredentials`) are `[redacted]` in it, as in a `command` agent's reply:
 * the default prompt is the whole payload, and Gogs sends the hook's secret inside it. The list is the config's
 * (with what the MCP servers send, as each connect renders them), read at each run: the same frozen list while
 * none changed, whose forms are worked out once (none: the reply as it is); reading the subscriptions' secrets
 * at each run, as a `command` run does, would cost a stat of their file per run.
 */
export function echoRunner(credentials: () => readonly string[] = () => NONE): AgentRunner {
  return {
    async run(request) {
      return {
        text: scrubberFor(credentials())(
          request.skill === undefined ? request.prompt : withSkill(request.skill, request.prompt),
        ),
      };
    },
  };
}

const NONE: readonly string[] = Object.freeze([]);

/** The prompt as a runner without native skill support sees it: the skill text first, under a clear header. */
export function withSkill(skill: { readonly name: string; readonly text: string }, prompt: string): string {
  return `# Skill: ${skill.name}\n\n${skill.text.trimEnd()}\n\n# Event\n\n${prompt}`;
}
