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
