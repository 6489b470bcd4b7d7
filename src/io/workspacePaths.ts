import { isAbsolute } from "node:path";

/** A path the model gave, checked before touching the disk: relative, no `..`, no NUL. */
export function checkRelative(path: string): string | undefined {
  if (path.includes("\0")) return "the path contains a NUL character";
  if (isAbsolute(path) || /^[A-Za-z]:[\\/]/.test(path))
    return `"${path}" is absolute — give a path inside the workspace`;
  if (path.split(/[\\/]/).includes(".."))
    return `"${path}" contains ".." — paths must stay inside the workspace`;
  return undefined;
}

/** A C0 control character or DEL: a line break in a file name would make a listing of it read as two entries. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
export const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;
/** The most bytes one file or directory name may have (Linux, macOS and Windows file systems alike). */
const NAME_MAX = 255;

/**
 * Why `file_write` will not create `rel`: a line break or other control character in it (a listing of it
 * could pass for other entries), or a name too long for the file system, found before any directory is made.
 */
export function unfitName(rel: string): string | undefined {
  const control = CONTROL_CHARACTER.exec(rel)?.[0];
  if (control !== undefined) {
    const code = `U+${control.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`;
    return `${JSON.stringify(rel)} holds a control character (${code}) — name files without line breaks or control characters`;
  }
  for (const part of rel.split(/[\\/]/)) {
    const bytes = Buffer.byteLength(part);
    if (bytes > NAME_MAX)
      return `"${rel}": the name "${part.slice(0, 40)}…" is ${bytes} bytes; a file or directory name may have at most ${NAME_MAX}`;
  }
  return undefined;
}
