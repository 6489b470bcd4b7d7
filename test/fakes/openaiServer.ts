import {
  argsText,
  type FakeModel,
  type FakeModelOptions,
  halves,
  type ModelTurn,
  rawArgumentsMark,
  sse,
  startScriptedModel,
  withRawArguments,
} from "./modelScript.js";

export type { FakeModel, ModelTurn } from "./modelScript.js";

/**
 * A scripted OpenAI-compatible Chat Completions server (`POST <baseUrl>/chat/completions`) on 127.0.0.1:
 * answers each request with the next scripted turn, as one JSON body or, when the request asks
 * `stream: true` (every request with `streamAlways`), as SSE chunks ending in `[DONE]`, the text and each
 * call's arguments in two chunks. Usage: 10 tokens in, 5 out per turn. Like OpenAI, it
 * answers 400 to a request offering a function name longer than 64 characters, parameters without
 * properties or with oneOf, anyOf, allOf, enum or not at their top level, or an array schema without items,
 * and to one whose history holds a tool call named outside `^[a-zA-Z0-9_-]+$`.
 */
/** Whether `schema` holds an array schema without `items` (OpenAI looks at every nested schema). */
function bareArray(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.some(bareArray);
  if (schema === null || typeof schema !== "object") return false;
  const node = schema as Record<string, unknown>;
  const type = node.type;
  const array = type === "array" || (Array.isArray(type) && type.includes("array"));
  // OpenAI reads no prefixItems (pydantic's tuples) and takes no list of schemas as items (draft-07's tuple).
  if (array && (!("items" in node) || Array.isArray(node.items))) return true;
  return Object.entries(node).some(
    ([key, value]) => !["enum", "const", "default", "examples"].includes(key) && bareArray(value),
  );
}

export function startFakeOpenAI(options: FakeModelOptions = {}): Promise<FakeModel> {
  return startScriptedModel("/chat/completions", (turn, request, res, index) => {
    const tools = (request.json.tools ?? []) as Array<{ function: { name: string } }>;
    // As OpenAI does: more than 128 tools fail the whole request.
    if (tools.length > 128) {
      res.writeHead(400, { "content-type": "application/json" }).end(
        JSON.stringify({
          error: {
            message: `Invalid 'tools': array too long. Expected an array with maximum length 128, but got an array with length ${tools.length} instead.`,
            type: "invalid_request_error",
            param: "tools",
            code: "array_above_max_length",
          },
        }),
      );
      return;
    }
    // As OpenAI does: a function name longer than 64 characters fails the whole request.
    const long = tools.findIndex((t) => t.function.name.length > 64);
    if (long >= 0) {
      const length = tools[long]?.function.name.length;
      res.writeHead(400, { "content-type": "application/json" }).end(
        JSON.stringify({
          error: {
            message: `Invalid 'tools[${long}].function.name': string too long. Expected a string with maximum length 64, but got a string with length ${length} instead.`,
            type: "invalid_request_error",
            param: `tools[${long}].function.name`,
            code: "string_above_max_length",
          },
        }),
      );
      return;
    }
    // As OpenAI does: parameters of type object without properties fail the whole request.
    const bareObject = tools.find((t) => {
      const parameters = (t as { function: { parameters?: Record<string, unknown> } }).function.parameters;
      return parameters !== undefined && !("properties" in parameters);
    });
    if (bareObject !== undefined) {
      res.writeHead(400, { "content-type": "application/json" }).end(
        JSON.stringify({
          error: {
            message: `Invalid schema for function '${bareObject.function.name}': In context=(), object schema missing properties.`,
            type: "invalid_request_error",
            param: "tools",
            code: "invalid_function_parameters",
          },
        }),
      );
      return;
    }
    // As OpenAI does: parameters with a union, enum or not at their top level fail the whole request.
    const topLevel = tools.find((t) => {
      const parameters = (t as { function: { parameters?: Record<string, unknown> } }).function.parameters;
      return ["oneOf", "anyOf", "allOf", "enum", "not"].some((key) => key in (parameters ?? {}));
    });
    if (topLevel !== undefined) {
      res.writeHead(400, { "content-type": "application/json" }).end(
        JSON.stringify({
          error: {
            message: `Invalid schema for function '${topLevel.function.name}': schema must have type 'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/'not' at the top level.`,
            type: "invalid_request_error",
            param: "tools",
            code: "invalid_function_parameters",
          },
        }),
      );
      return;
    }
    // As OpenAI does: an array schema without items anywhere in a tool's parameters fails the whole request.
    const bare = tools.find((t) =>
      bareArray((t as { function: { parameters?: unknown } }).function.parameters),
    );
    if (bare !== undefined) {
      res.writeHead(400, { "content-type": "application/json" }).end(
        JSON.stringify({
          error: {
            message: `Invalid schema for function '${bare.function.name}': array schema missing items.`,
            type: "invalid_request_error",
            param: "tools",
            code: "invalid_function_parameters",
          },
        }),
      );
      return;
    }
    // As OpenAI does: a tool name in the history outside its pattern fails the whole request.
    const history = (request.json.messages ?? []) as Array<{
      tool_calls?: Array<{ function?: { name?: unknown } }>;
    }>;
    for (const [i, message] of history.entries())
      for (const [j, call] of (message.tool_calls ?? []).entries()) {
        if (typeof call.function?.name === "string" && /^[a-zA-Z0-9_-]+$/.test(call.function.name)) continue;
        res.writeHead(400, { "content-type": "application/json" }).end(
          JSON.stringify({
            error: {
              message: `Invalid 'messages[${i}].tool_calls[${j}].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`,
              type: "invalid_request_error",
              param: `messages[${i}].tool_calls[${j}].function.name`,
              code: "invalid_value",
            },
          }),
        );
        return;
      }
    const model = turn.model ?? String(request.json.model ?? "fake");
    const calls = (turn.toolCalls ?? []).map((call, i) => ({
      id: call.id ?? `call_${index}_${i}`,
      type: "function" as const,
      function: {
        ...(call.unnamed === undefined ? { name: call.name } : call.unnamed === "null" ? { name: null } : {}),
        arguments: call.rawObject
          ? rawArgumentsMark(i)
          : call.argumentsAsObject
            ? call.args
            : argsText(call.args),
      },
      ...(call.thoughtSignature === undefined
        ? {}
        : { extra_content: { google: { thought_signature: call.thoughtSignature } } }),
    }));
    const finish = turn.finishReason ?? (calls.length > 0 ? "tool_calls" : "stop");
    const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
    const base = { id: `chatcmpl-${index}`, created: 1_700_000_000, model };
    if (request.json.stream !== true && !options.streamAlways) {
      res.writeHead(200, { "content-type": "application/json" }).end(
        withRawArguments(turn, {
          ...base,
          object: "chat.completion",
          choices: [
            {
              index: 0,
              message: {
                role: "assistant",
                content: turn.contentParts ?? turn.text ?? null,
                ...(turn.refusal === undefined ? {} : { refusal: turn.refusal }),
                ...(turn.reasoningContent === undefined ? {} : { reasoning_content: turn.reasoningContent }),
                ...(turn.reasoning === undefined ? {} : { reasoning: turn.reasoning }),
                ...(calls.length === 0
                  ? {}
                  : turn.legacyFunctionCall
                    ? { function_call: calls[0]?.function }
                    : { tool_calls: calls }),
              },
              finish_reason: turn.legacyFunctionCall ? "function_call" : finish,
            },
          ],
          usage,
        }),
      );
      return;
    }
    const chunk = (delta: unknown, finishReason: string | null = null) => ({
      data: {
        ...base,
        object: "chat.completion.chunk",
        choices: [{ index: 0, delta, finish_reason: finishReason }],
      },
    });
    sse(res, [
      chunk({ role: "assistant", content: "" }),
      ...(turn.reasoningContent === undefined ? [] : [chunk({ reasoning_content: turn.reasoningContent })]),
      ...(turn.reasoning === undefined ? [] : [chunk({ reasoning: turn.reasoning })]),
      ...(turn.text === undefined ? [] : halves(turn.text).map((text) => chunk({ content: text }))),
      ...(turn.contentParts ?? []).map((part) => chunk({ content: [part] })),
      ...calls.flatMap((call, i) => {
        const args = call.function.arguments;
        if (typeof args !== "string") return [chunk({ tool_calls: [{ index: i, ...call }] })];
        const [first = "", ...rest] = halves(args);
        return [
          chunk({ tool_calls: [{ index: i, ...call, function: { ...call.function, arguments: first } }] }),
          ...rest.map((piece) => chunk({ tool_calls: [{ index: i, function: { arguments: piece } }] })),
        ];
      }),
      chunk({}, finish),
      { data: { ...base, object: "chat.completion.chunk", choices: [], usage } },
      { data: "[DONE]" },
    ]);
  });
}

/** A scripted turn asking for one tool. */
export const callTool = (name: string, args: unknown = {}): ModelTurn => ({ toolCalls: [{ name, args }] });
