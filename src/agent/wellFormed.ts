import type { wrapLanguageModel } from "ai";

type Middleware = Extract<
  Parameters<typeof wrapLanguageModel>[0]["middleware"],
  { specificationVersion: "v3" }
>;

/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

const isPlain = (value: object) => {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
};

/**
 * `value` with every text well-formed: a lone surrogate (half of an emoji, as a JavaScript MCP server that
 * cuts its text with `slice` sends it, or a payload's `"\ud83d"`) becomes U+FFFD. The Messages API refuses
 * a whole request holding one ("The request body is not valid JSON: no low surrogate in string"), and
 * Python servers fail encoding it. Arrays and plain objects are walked; other objects (image bytes, URLs)
 * are kept as they are. What holds no lone surrogate is returned unchanged.
 */
export function wellFormed<T>(value: T): T {
  if (typeof value === "string") {
    LONE_SURROGATE.lastIndex = 0;
    return (LONE_SURROGATE.test(value) ? value.replace(LONE_SURROGATE, "\uFFFD") : value) as T;
  }
  if (Array.isArray(value)) {
    const items = value.map((item) => wellFormed(item));
    return (items.every((item, i) => item === value[i]) ? value : items) as T;
  }
  if (value === null || typeof value !== "object" || !isPlain(value)) return value;
  let changed = false;
  const entries = Object.entries(value).map(([key, item]) => {
    const fixed = wellFormed(item);
    if (fixed !== item) changed = true;
    return [key, fixed] as const;
  });
  return changed ? (Object.fromEntries(entries) as T) : value;
}

/** `wellFormed` on every model call's prompt and tools (both providers: the text comes from payloads and tools). */
export const wellFormedMiddleware: Middleware = {
  specificationVersion: "v3",
  transformParams: async ({ params }) => ({
    ...params,
    prompt: wellFormed(params.prompt),
    ...(params.tools === undefined ? {} : { tools: wellFormed(params.tools) }),
  }),
};
