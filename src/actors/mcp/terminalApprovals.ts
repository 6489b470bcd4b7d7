import { createInterface } from "node:readline";
import type { ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { cutText } from "../../io/cutText.js";
import { terminalText } from "../../io/terminalText.js";
import type { ApprovalSurface } from "./approvals.js";
import { answerProblem, type CheckedField } from "./formAnswer.js";

interface Terminal {
  readonly input: NodeJS.ReadableStream & { isTTY?: boolean };
  readonly output: NodeJS.WritableStream;
  /** Aborted by a Ctrl-C that ends the command: the open question's line is ended before it says so. */
  readonly interrupted?: AbortSignal;
}

/**
 * Asks one question; undefined when the input closes or the signal aborts first. Left unanswered (the
 * wait ran out, Ctrl-D), the question's line is ended: what is written next starts a line of its own
 * instead of following `[y/N] ` (an answer's Enter is echoed by the terminal).
 */
function ask(terminal: Terminal, question: string, signal: AbortSignal): Promise<string | undefined> {
  return new Promise((resolve) => {
    const rl = createInterface({ input: terminal.input, output: terminal.output, terminal: false });
    let done = false;
    const finish = (answer: string | undefined) => {
      if (done) return;
      done = true;
      signal.removeEventListener("abort", onAbort);
      terminal.interrupted?.removeEventListener("abort", onAbort);
      rl.close();
      if (answer === undefined) terminal.output.write("\n");
      resolve(answer);
    };
    const onAbort = () => finish(undefined);
    signal.addEventListener("abort", onAbort, { once: true });
    terminal.interrupted?.addEventListener("abort", onAbort, { once: true });
    rl.on("close", () => finish(undefined));
    rl.once("line", (line) => finish(line));
    terminal.output.write(question);
  });
}

/** A property of a form's `requestedSchema` (MCP allows flat primitives, enums and multi-select arrays). */
interface FormField extends CheckedField {
  readonly description?: string;
  readonly default?: unknown;
  readonly enum?: readonly unknown[];
  readonly enumNames?: readonly string[];
  readonly oneOf?: ReadonlyArray<{ const?: unknown; title?: string }>;
  readonly items?: {
    readonly enum?: readonly unknown[];
    readonly anyOf?: ReadonlyArray<{ const?: unknown; title?: string }>;
  };
}

interface Choice {
  readonly value: string;
  readonly title?: string;
}

/** The values a field allows (single or multi-select), with their titles when the schema gives them. */
function choices(field: FormField): Choice[] {
  const titled = (list: ReadonlyArray<{ const?: unknown; title?: string }>) =>
    list.map((o) => ({ value: String(o.const), ...(o.title === undefined ? {} : { title: o.title }) }));
  if (field.oneOf !== undefined) return titled(field.oneOf);
  if (field.items?.anyOf !== undefined) return titled(field.items.anyOf);
  const values = field.enum ?? field.items?.enum ?? [];
  return values.map((v, i) => {
    const title = field.enumNames?.[i];
    return { value: String(v), ...(title === undefined ? {} : { title }) };
  });
}

/** A default as the user types it: a list comma-separated. */
function fieldText(value: unknown): string {
  return Array.isArray(value) ? value.map(String).join(", ") : String(value);
}

/** A typed answer as the schema's type: numbers, yes/no, comma-separated lists; a choice's title is its value. */
function fieldValue(field: FormField, text: string, options: Choice[]): string | number | boolean | string[] {
  const pick = (answer: string) =>
    options.find((o) => o.value === answer)?.value ??
    options.find((o) => o.title?.toLowerCase() === answer.toLowerCase())?.value ??
    answer;
  if (field.type === "number" || field.type === "integer") return Number(text);
  if (field.type === "boolean") return /^(y|yes|true|1)$/i.test(text);
  if (field.type === "array")
    return text
      .split(",")
      .map((part) => part.trim())
      .filter((part) => part !== "")
      .map(pick);
  return pick(text);
}

/**
 * The CLI's surface: a prompt on the terminal. When stdin is not a terminal, or closes before an answer,
 * the answer is no (deny, decline).
 */
export function terminalApprovals(
  terminal: Terminal = { input: process.stdin, output: process.stderr },
): ApprovalSurface {
  const surface = askingSurface(terminal);
  // Each question reads a line of the one terminal: a form or approval that arrives while another is asked
  // (a server's second form, a parallel call's approval) waits its turn, else one typed line would answer
  // both and their questions would interleave. One whose wait ran out meanwhile is not shown at all.
  let turn: Promise<unknown> = Promise.resolve();
  const inTurn = <T>(signal: AbortSignal, unanswered: T, work: () => Promise<T>): Promise<T> => {
    const mine = turn.then(() => (signal.aborted ? unanswered : work()));
    turn = mine.catch(() => undefined);
    return mine;
  };
  return {
    ...surface,
    approve: (request, signal) => inTurn(signal, false, () => surface.approve(request, signal)),
    elicit: (request, signal) =>
      inTurn<ElicitResult>(signal, { action: "cancel" }, () => surface.elicit(request, signal)),
  };
}

/** The terminal's questions, each asked at once (terminalApprovals asks them one at a time). */
function askingSurface(terminal: Terminal): ApprovalSurface {
  return {
    attended: () => terminal.input.isTTY === true,
    // The text quotes the server's field names: no terminal escapes from it.
    notice: (text) => terminal.output.write(`svc: ${terminalText(text)}\n`),
    async approve(request, signal) {
      if (terminal.input.isTTY !== true) return false;
      const args = JSON.stringify(request.args);
      // The tool name is the untrusted server's text: quoted on one line with its control characters
      // escaped, so an escape sequence or a line break in it cannot rewrite the question being answered.
      const answer = await ask(
        terminal,
        terminalText(
          `Server "${request.server}" is untrusted. Run tool ${JSON.stringify(request.tool)} with ${args.length > 200 ? `${cutText(args, 197)}...` : args}? [y/N] `,
        ),
        signal,
      );
      return answer !== undefined && /^y(es)?$/i.test(answer.trim());
    },
    async elicit(request, signal): Promise<ElicitResult> {
      if (terminal.input.isTTY !== true) {
        // Declined without asking anyone: said, since the tool's result may read as the user's own no.
        terminal.output.write(
          `svc: elicitation from ${terminalText(request.server)}: declined — stdin is not a terminal, so no one could answer the form: run the command in a terminal, or set elicitation.unattended: defaults (svc mcp call --elicitation defaults) to answer it with the form's defaults\n`,
        );
        return { action: "decline" };
      }
      // The form is the server's text: its control characters are shown escaped, never acted on.
      terminal.output.write(terminalText(`Server "${request.server}" asks: ${request.message}\n`));
      const content: Record<string, string | number | boolean | string[]> = {};
      for (const [key, property] of Object.entries(request.requestedSchema.properties)) {
        const field = property as FormField;
        const options = choices(field);
        const shown =
          options.length === 0
            ? ""
            : ` {${options.map((o) => (o.title === undefined ? o.value : `${o.value} = ${o.title}`)).join(", ")}}`;
        const allowed = options.map((o) => o.value);
        // A default the field's schema does not allow counts as none (as with elicitation.unattended:
        // defaults): not offered, so an empty answer leaves an optional field out.
        const usable =
          field.default !== undefined &&
          answerProblem(field, field.default as string | number | boolean | string[], allowed) === undefined;
        const fallback = usable ? fieldText(field.default) : undefined;
        const hint = fallback === undefined ? "" : ` [${fallback}]`;
        const question = terminalText(
          `  ${key}${field.description ? ` (${field.description})` : ""}${shown}${hint}: `.replace(
            /\n/g,
            " ",
          ),
        );
        const required = (request.requestedSchema.required ?? []).includes(key);
        // An answer the field does not allow is refused with the reason and the field asked again:
        // the server gets values its schema takes (a number, never NaN; one of the choices), or nothing.
        for (;;) {
          const answer = await ask(terminal, question, signal);
          if (answer === undefined) return { action: "cancel" };
          const text = answer.trim() === "" && fallback !== undefined ? fallback : answer.trim();
          if (text === "" && !required) break;
          if (text === "" && field.type !== "boolean") {
            terminal.output.write("    an answer is required\n");
            continue;
          }
          const value = fieldValue(field, text, options);
          const problem = answerProblem(field, value, allowed);
          if (problem === undefined) {
            content[key] = value;
            break;
          }
          terminal.output.write(`    ${terminalText(problem)}\n`);
        }
      }
      const confirm = await ask(terminal, "Send these answers? [y/N] ", signal);
      if (confirm === undefined) return { action: "cancel" };
      return /^y(es)?$/i.test(confirm.trim()) ? { action: "accept", content } : { action: "decline" };
    },
  };
}
