import { MAX_ARGUMENT_DEPTH, nestedDeeperThan, TOO_DEEP_ARGUMENTS_TEXT } from "./toolCallInputs.js";

/**
 * A Chat Completions answer in the shape the AI SDK reads, where servers that call themselves
 * OpenAI-compatible write tool calls their own way; without this the SDK refuses the whole answer
 * ("gave an answer svc cannot use") or drops the call:
 * - `function.arguments` as a JSON object rather than its text (servers that pass their model's parsed
 *   arguments through, as Ollama's own API writes them): sent on as its JSON text; `null` or no `arguments`
 *   at all (a call of a tool without parameters) as the text `null` (a tool error, as any arguments that
 *   are no object) or as empty arguments (`{}`): the SDK refused the whole answer, failing the run;
 *   arguments nested too deep to be written out as text are refused by the tool loop, the run goes on;
 * - the legacy `function_call` (with `finish_reason: function_call`) instead of `tool_calls`, as older
 *   servers answer: taken as the one tool call it names (the SDK gives it an id).
 * Returns `undefined` when the answer needs no change (the common case), so nothing is re-serialised.
 */
export function normalizedChatAnswer(answer: unknown): unknown {
  if (!isRecord(answer) || !Array.isArray(answer.choices)) return undefined;
  let changed = false;
  const choices = answer.choices.map((choice: unknown) => {
    if (!isRecord(choice) || !isRecord(choice.message)) return choice;
    const message = choice.message;
    let calls = message.tool_calls;
    if ((calls === undefined || calls === null) && isRecord(message.function_call))
      calls = [{ type: "function", function: message.function_call }];
    else if (!Array.isArray(calls) || !calls.some(hasArgumentsNotText)) return choice;
    changed = true;
    const { function_call: _legacy, ...rest } = message;
    return {
      ...choice,
      message: { ...rest, tool_calls: (calls as unknown[]).map(withTextArguments) },
    };
  });
  return changed ? { ...answer, choices } : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function hasArgumentsNotText(call: unknown): boolean {
  if (!isRecord(call) || !isRecord(call.function)) return false;
  return typeof call.function.arguments !== "string";
}

function withTextArguments(call: unknown): unknown {
  if (!hasArgumentsNotText(call)) return call;
  const record = call as Record<string, unknown> & { function: Record<string, unknown> };
  const args = record.function.arguments;
  // JSON.stringify cannot write arguments nested some thousands of levels deep: they stand as a text
  // nested past the limit, which the tool loop refuses as it would their own (`deepArgumentsMiddleware`).
  const text =
    args === undefined
      ? ""
      : nestedDeeperThan(args, MAX_ARGUMENT_DEPTH)
        ? TOO_DEEP_ARGUMENTS_TEXT
        : JSON.stringify(args);
  return { ...record, function: { ...record.function, arguments: text } };
}
