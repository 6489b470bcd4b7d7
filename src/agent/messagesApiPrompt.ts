import type { wrapLanguageModel } from "ai";
import { imageLine, pixelsOf } from "./imageLine.js";
import type { ProviderModel } from "./retry.js";

/** The provider-level prompt and middleware (`@ai-sdk/provider` is not a direct dependency). */
type Prompt = Parameters<ProviderModel["doGenerate"]>[0]["prompt"];
type Middleware = Extract<
  Parameters<typeof wrapLanguageModel>[0]["middleware"],
  { specificationVersion: "v3" }
>;

/** What the model is sent for a prompt that rendered to nothing (`{comment.body}` of an empty comment). */
export const EMPTY_PROMPT = "(the prompt is empty)";

const blank = (part: { type: string; text?: string }) =>
  part.type === "text" && (part.text ?? "").trim() === "";

/**
 * The run's messages as the Messages API takes them: it refuses the whole request for a text block that is
 * empty or only whitespace ("text content blocks must contain non-whitespace text"), which a rendered prompt
 * can be, and so can a turn in which the model wrote only a line break before its tool calls. Such blocks
 * are left out; a user message left with nothing says the prompt is empty.
 */
export function messagesApiPrompt(prompt: Prompt): Prompt {
  return prompt.map((message) => {
    if (message.role === "user") {
      if (!message.content.some(blank)) return message;
      const kept = message.content.filter((part) => !blank(part));
      return { ...message, content: kept.length > 0 ? kept : [{ type: "text", text: EMPTY_PROMPT }] };
    }
    if (message.role === "assistant") {
      if (!message.content.some(blank)) return message;
      const kept = message.content.filter((part) => !blank(part));
      return { ...message, content: kept.length > 0 ? kept : [{ type: "text", text: "(no text)" }] };
    }
    return message;
  });
}

/** More images than this in one request and the Messages API takes none with a side past `MANY_IMAGES_MAX_SIDE`. */
const MANY_IMAGES = 20;
const MANY_IMAGES_MAX_SIDE = 2000;
/** The most images the Messages API takes in one request. */
const MAX_IMAGES = 100;

type ToolOutput = Extract<Prompt[number], { role: "tool" }>["content"][number];
type ContentOutput = Extract<Extract<ToolOutput, { type: "tool-result" }>["output"], { type: "content" }>;
type OutputPart = ContentOutput["value"][number];

/**
 * The run's messages with each tool result's image that has a side past 2000 pixels named in a line, when
 * the request holds more than 20 images: the Messages API then refuses the whole request ("At least one of
 * the image dimensions exceed max allowed size for many-image requests: 2000 pixels"), as a run that takes
 * a screenshot each turn (2560 pixels wide on a HiDPI display) reaches. Fewer images go as they are. And
 * past the 100 images a request may hold, the earliest ones are named in a line, the latest 100 sent.
 */
export function manyImagesPrompt(prompt: Prompt): Prompt {
  const outputs = prompt.flatMap((message) =>
    message.role === "tool"
      ? message.content.flatMap((part) =>
          part.type === "tool-result" && part.output.type === "content" ? [part.output] : [],
        )
      : [],
  );
  const images = outputs.flatMap((output) => output.value.filter((part) => part.type === "image-data"));
  if (images.length <= MANY_IMAGES) return prompt;
  const dropped = new Set<OutputPart>(images.slice(0, Math.max(0, images.length - MAX_IMAGES)));
  const line = (part: OutputPart): OutputPart => {
    if (part.type !== "image-data") return part;
    if (dropped.has(part))
      return {
        type: "text",
        text: imageLine(
          part.mediaType,
          part.data,
          undefined,
          `a request takes at most ${MAX_IMAGES} images; the run's latest ${MAX_IMAGES} are shown`,
        ),
      };
    const pixels = pixelsOf(part.data);
    if (pixels === undefined || Math.max(pixels.width, pixels.height) <= MANY_IMAGES_MAX_SIDE) return part;
    return {
      type: "text",
      text: imageLine(
        part.mediaType,
        part.data,
        pixels,
        `a request with more than ${MANY_IMAGES} images takes images of at most ${MANY_IMAGES_MAX_SIDE} pixels a side`,
      ),
    };
  };
  return prompt.map((message) => {
    if (message.role !== "tool") return message;
    return {
      ...message,
      content: message.content.map((part) =>
        part.type === "tool-result" && part.output.type === "content"
          ? { ...part, output: { ...part.output, value: part.output.value.map(line) } }
          : part,
      ),
    };
  });
}

/** `messagesApiPrompt` and `manyImagesPrompt` on every call of an `anthropic` model. */
export const messagesApiMiddleware: Middleware = {
  specificationVersion: "v3",
  transformParams: async ({ params }) => ({
    ...params,
    prompt: manyImagesPrompt(messagesApiPrompt(params.prompt)),
  }),
};
