/**
 * The image types the model APIs take — the Messages API refuses any other, failing the whole request,
 * and OpenAI's image inputs are the same four — shared by MCP tool results and `vision_analyze`.
 */
const MODEL_IMAGE_TYPES: ReadonlySet<string> = new Set([
  "image/jpeg",
  "image/png",
  "image/gif",
  "image/webp",
]);

/**
 * The `Accept` header asking for them: `image/*` lets a server negotiating formats pick AVIF or HEIC,
 * which the model would not take.
 */
export const MODEL_IMAGE_ACCEPT = [...MODEL_IMAGE_TYPES].join(",");

/** The types above as a sentence names them. */
export const MODEL_IMAGE_TYPES_NAMED = "JPEG, PNG, GIF and WebP";

/**
 * An image's type as the model APIs name it, or undefined for a type they do not take: servers write
 * `image/jpg` and capitals (`image/PNG`), which the APIs refuse, failing the whole request.
 */
export function modelImageType(mimeType: string): string | undefined {
  const type = mimeType.trim().toLowerCase();
  const named = type === "image/jpg" ? "image/jpeg" : type;
  return MODEL_IMAGE_TYPES.has(named) ? named : undefined;
}

/**
 * The type an image's first bytes show, when it is one the model APIs take (the signatures the AI SDK
 * checks, and which it sends in place of the type given): a `.png` served as `image/x-png` or
 * `application/octet-stream` is still a PNG.
 */
export function sniffedImageType(head: Buffer): string | undefined {
  if (head.toString("latin1", 0, 3) === "GIF") return "image/gif";
  if (head.toString("latin1", 0, 4) === "\x89PNG") return "image/png";
  if (head[0] === 0xff && head[1] === 0xd8) return "image/jpeg";
  if (head.toString("latin1", 0, 4) === "RIFF" && head.toString("latin1", 8, 12) === "WEBP")
    return "image/webp";
  return undefined;
}

/** Labels that say nothing of what a binary is: its first bytes tell. */
const GENERIC_TYPES: ReadonlySet<string> = new Set(["", "application/octet-stream", "binary/octet-stream"]);

/**
 * The type to give a binary resource's `blob` (base64) as an image, when it is one the model APIs take:
 * labelled as one, or with no label, a generic one or another image type (`image/x-png`), when its first
 * bytes show one. Undefined for any other (a zip, audio, an SVG), which is named in a line instead.
 */
export function resourceImageType(mimeType: string | undefined, blob: string): string | undefined {
  if (mimeType !== undefined && modelImageType(mimeType) !== undefined) return mimeType;
  const label = (mimeType ?? "").trim().toLowerCase();
  if (!GENERIC_TYPES.has(label) && !label.startsWith("image/")) return undefined;
  return sniffedImageType(Buffer.from(blob.slice(0, 24), "base64"));
}
