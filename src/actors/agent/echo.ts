import type { AgentRunner } from "./runner.js";

/** `provider: echo` — the reply is the prompt (with the loaded skill, if any), so everything works without a model. */
export function echoRunner(): AgentRunner {
  return {
    async run(request) {
      return {
        text: request.skill === undefined ? request.prompt : withSkill(request.skill, request.prompt),
      };
    },
  };
}

/** The prompt as a runner without native skill support sees it: the skill text first, under a clear header. */
export function withSkill(skill: { readonly name: string; readonly text: string }, prompt: string): string {
  return `# Skill: ${skill.name}\n\n${skill.text.trimEnd()}\n\n# Event\n\n${prompt}`;
}
