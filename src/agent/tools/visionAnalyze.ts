import type { WebSettings } from "../../config/sections/tools.js";
import { guardedFetch } from "../../io/web/guardedFetch.js";
import {
  MODEL_IMAGE_ACCEPT,
  MODEL_IMAGE_TYPES_NAMED,
  modelImageType,
  sniffedImageType,
} from "../modelImageTypes.js";
import { argsObject, optionalString, stringArg, textOutcome, toolError } from "./outcome.js";
import type { AgentTool } from "./tool.js";
import type { WebDeps } from "./webExtract.js";

/** Largest image downloaded for the model. */
export const IMAGE_MAX_BYTES = 8 * 1024 * 1024;

const DEFAULT_QUESTION = "Describe this image in detail.";

/** Why another image type is refused: the model's API would refuse it, failing the tool call anyway. */
const TAKEN = `the model takes ${MODEL_IMAGE_TYPES_NAMED} images`;

/**
 * The image as a `data:` URL: svc downloads it (same address rules as `web_extract`) so the model's
 * provider, or the AI SDK on its behalf, never fetches an address chosen by the payload.
 */
async function imageDataUrl(url: string, settings: WebSettings, deps: WebDeps, signal: AbortSignal) {
  // A URL's scheme is case-insensitive: `DATA:` is no address to fetch, and is handed on as `data:`.
  if (/^data:/i.test(url)) {
    const image = /^data:(image\/[a-z0-9.+-]+);base64,/i.exec(url);
    if (image === null)
      return {
        ok: false as const,
        error: "a data: URL must hold a base64 image (data:image/png;base64,...)",
      };
    const head = Buffer.from(url.slice(image[0].length, image[0].length + 16), "base64");
    const type = sniffedImageType(head) ?? modelImageType(image[1] as string);
    return type === undefined
      ? { ok: false as const, error: `the data: URL holds ${image[1]}: ${TAKEN}` }
      : { ok: true as const, url: `data:${type};base64,${url.slice(image[0].length)}` };
  }
  const fetched = await guardedFetch(url, {
    allowPrivate: settings.allow_private,
    maxBytes: IMAGE_MAX_BYTES,
    timeoutMs: settings.timeout_seconds * 1000,
    signal,
    accept: MODEL_IMAGE_ACCEPT,
    ...(deps.resolve === undefined ? {} : { resolve: deps.resolve }),
    ...(deps.isPublic === undefined ? {} : { isPublic: deps.isPublic }),
  });
  if (!fetched.ok) return fetched;
  if (fetched.status >= 400)
    return { ok: false as const, error: `HTTP ${fetched.status} from ${fetched.url}` };
  const type = fetched.contentType.split(";")[0]?.trim().toLowerCase() ?? "";
  const sniffed = sniffedImageType(fetched.body);
  if (sniffed === undefined && !type.startsWith("image/"))
    return { ok: false as const, error: `not an image: ${fetched.url} is ${type || "untyped"}` };
  const taken = sniffed ?? modelImageType(type);
  if (taken === undefined) return { ok: false as const, error: `${fetched.url} is ${type}: ${TAKEN}` };
  if (fetched.truncated)
    return {
      ok: false as const,
      error: `${fetched.url} is larger than ${IMAGE_MAX_BYTES / (1024 * 1024)} MiB (${IMAGE_MAX_BYTES} bytes), the most vision_analyze downloads`,
    };
  // The provider would refuse an empty image with a message naming no URL.
  if (fetched.body.length === 0)
    return { ok: false as const, error: `${fetched.url} is empty (0 bytes): there is no image to look at` };
  return { ok: true as const, url: `data:${taken};base64,${fetched.body.toString("base64")}` };
}

/** `vision_analyze`: asks the run's model about an image (docs/agent-tools.md). */
export function visionAnalyzeTool(settings: WebSettings, deps: WebDeps = {}): AgentTool {
  return {
    name: "vision_analyze",
    description: `Look at a ${MODEL_IMAGE_TYPES_NAMED} image (http(s) URL or data:image URL) and answer a question about it with the run's model.`,
    inputSchema: {
      type: "object",
      properties: {
        image_url: {
          type: "string",
          description: "The image's http(s) URL, or a data:image/...;base64, URL",
        },
        question: { type: "string", description: `What to find out (default: "${DEFAULT_QUESTION}")` },
      },
      required: ["image_url"],
      additionalProperties: false,
    },
    async execute(args, context) {
      if (context.analyzeImage === undefined) {
        return toolError(
          "vision_analyze is not available: this run's agent has no model that can see images",
        );
      }
      const object = argsObject(args);
      if (typeof object === "string") return toolError(object);
      const url = stringArg(object, "image_url");
      if (typeof url !== "string") return toolError(url.error);
      const question = optionalString(object, "question");
      if (typeof question === "object") return toolError(question.error);
      const image = await imageDataUrl(url, settings, deps, context.signal);
      if (!image.ok) return toolError(image.error);
      try {
        const answer = await context.analyzeImage(
          image.url,
          question?.trim() || DEFAULT_QUESTION,
          context.signal,
        );
        return textOutcome(answer);
      } catch (err) {
        return toolError(`vision_analyze failed: ${(err as Error).message}`);
      }
    },
  };
}
