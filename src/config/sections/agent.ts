import { z } from "zod";
import { timerSeconds } from "../timerSeconds.js";

/** The agent runner : `echo` replies with the prompt, `command` runs an argv. */
export const agentSchema = z
  .strictObject({
    provider: z.enum(["echo", "command"]).default("echo"),
    command: z.array(z.string().min(1)).min(1).optional(),
    timeout_seconds: timerSeconds(600),
    max_concurrent_runs: z.number().int().positive().default(4),
  })
  .superRefine((agent, ctx) => {
    if (agent.provider === "command" && agent.command === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["command"],
        message: 'missing — provider "command" needs command: [executable, args...]',
      });
    }
  })
  .default({ provider: "echo", timeout_seconds: 600, max_concurrent_runs: 4 });
export type AgentSettings = z.infer<typeof agentSchema>;

export const gatewaySchema = z
  .strictObject({
    multiplex_profiles: z.boolean().default(false),
    /** Answer to tool approvals and form elicitations when no terminal is attached. */
    approvals: z.enum(["deny", "allow"]).default("deny"),
    /**
     * How long SIGINT/SIGTERM waits for agent runs before saving the unfinished ones for the next start;
     * keep it under the supervisor's kill timeout (docker stop: 10 s), or the runs die with the process.
     */
    drain_timeout_seconds: z.number().min(0).max(3600).default(30),
  })
  .default({ multiplex_profiles: false, approvals: "deny", drain_timeout_seconds: 30 });
export type GatewaySettings = z.infer<typeof gatewaySchema>;
