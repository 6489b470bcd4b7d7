import { createInterface } from "node:readline";
import type { ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import type { ApprovalSurface } from "./approvals.js";

interface Terminal {
  readonly input: NodeJS.ReadableStream & { isTTY?: boolean };
  readonly output: NodeJS.WritableStream;
}

/** Asks one question; undefined when the input closes or the signal aborts first. */
function ask(terminal: Terminal, question: string, signal: AbortSignal): Promise<string | undefined> {
  return new Promise((resolve) => {
    const rl = createInterface({ input: terminal.input, output: terminal.output, terminal: false });
    let done = false;
    const finish = (answer: string | undefined) => {
      if (done) return;
      done = true;
      signal.removeEventListener("abort", onAbort);
      rl.close();
      resolve(answer);
    };
    const onAbort = () => finish(undefined);
    signal.addEventListener("abort", onAbort, { once: true });
    rl.on("close", () => finish(undefined));
    rl.once("line", (line) => finish(line));
    terminal.output.write(question);
  });
}

/**
 * The CLI's surface: a prompt on the terminal. When stdin is not a terminal, or closes before an answer,
 * the answer is no (deny, decline).
 */
export function terminalApprovals(
  terminal: Terminal = { input: process.stdin, output: process.stderr },
): ApprovalSurface {
  return {
    async approve(request, signal) {
      if (terminal.input.isTTY !== true) return false;
      const args = JSON.stringify(request.args);
      const answer = await ask(
        terminal,
        `Server "${request.server}" is untrusted. Run tool "${request.tool}" with ${args.length > 200 ? `${args.slice(0, 197)}...` : args}? [y/N] `,
        signal,
      );
      return answer !== undefined && /^y(es)?$/i.test(answer.trim());
    },
    async elicit(request, signal): Promise<ElicitResult> {
      if (terminal.input.isTTY !== true) return { action: "decline" };
      terminal.output.write(`Server "${request.server}" asks: ${request.message}\n`);
      const content: Record<string, string | number | boolean> = {};
      for (const [key, property] of Object.entries(request.requestedSchema.properties)) {
        const p = property as { type?: string; default?: unknown; description?: string };
        const hint = p.default === undefined ? "" : ` [${String(p.default)}]`;
        const answer = await ask(
          terminal,
          `  ${key}${p.description ? ` (${p.description})` : ""}${hint}: `,
          signal,
        );
        if (answer === undefined) return { action: "cancel" };
        const text = answer.trim() === "" && p.default !== undefined ? String(p.default) : answer.trim();
        if (text === "" && !(request.requestedSchema.required ?? []).includes(key)) continue;
        content[key] =
          p.type === "number" || p.type === "integer"
            ? Number(text)
            : p.type === "boolean"
              ? /^(y|yes|true|1)$/i.test(text)
              : text;
      }
      const confirm = await ask(terminal, "Send these answers? [y/N] ", signal);
      if (confirm === undefined) return { action: "cancel" };
      return /^y(es)?$/i.test(confirm.trim()) ? { action: "accept", content } : { action: "decline" };
    },
  };
}
