import { readFileSync, statSync } from "node:fs";
import { SvcError } from "../errors.js";

/** More than any secret: a file past it is some other file, not read whole into memory. */
const MAX_SECRET_BYTES = 64 * 1024;

/** `text` without the one line break a file or `echo` ends with (`\n` or `\r\n`); other ones are kept. */
export function withoutFinalLineBreak(text: string): string {
  return text.endsWith("\r\n") ? text.slice(0, -2) : text.endsWith("\n") ? text.slice(0, -1) : text;
}

/**
 * The secret held in the file at `path` (`--secret-file`), without its final line break; refused (a usage
 * error) with what to do when the file cannot be read, is no regular file, is empty or too large.
 */
export function readSecretFile(path: string, flag = "--secret-file"): string {
  const said = `${flag} ${path}`;
  let text: string;
  try {
    const stats = statSync(path);
    if (!stats.isFile())
      throw new SvcError("usage", `${said}: not a regular file — give the path of a file holding the secret`);
    if (stats.size > MAX_SECRET_BYTES)
      throw new SvcError(
        "usage",
        `${said}: ${stats.size} bytes, more than a secret (at most ${MAX_SECRET_BYTES}) — give the path of a file holding the secret alone`,
      );
    text = readFileSync(path, "utf8");
  } catch (err) {
    if (err instanceof SvcError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === "ENOENT" || code === "ENOTDIR"
        ? path.startsWith("~")
          ? `no such file: the shell does not expand a ~ written after = (--secret-file=~/...) — write ${flag} ${path} with a space, or $HOME in place of ~`
          : "no such file — give the path of a file holding the secret"
        : code === "EACCES" || code === "EPERM"
          ? "permission denied — make the file readable by this user (chmod 600, owned by it)"
          : `cannot be read (${(err as Error).message})`;
    throw new SvcError("usage", `${said}: ${why}`);
  }
  const secret = withoutFinalLineBreak(text);
  if (secret === "") throw new SvcError("usage", `${said}: the file is empty — write the secret into it`);
  return secret;
}

/**
 * The secret piped in on `stdin` (`--secret -`), without its final line break. A terminal is refused: what
 * is typed there is shown, which the option is there to avoid.
 */
export async function readSecretStdin(stdin: NodeJS.ReadStream = process.stdin): Promise<string> {
  if (stdin.isTTY === true)
    throw new SvcError(
      "usage",
      "--secret -: stdin is a terminal — pipe the secret in (printf '%s' \"$SECRET\" | svc ... --secret -) or give --secret-file <path>",
    );
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stdin) {
    const buffer = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
    size += buffer.length;
    if (size > MAX_SECRET_BYTES)
      throw new SvcError(
        "usage",
        `--secret -: more than ${MAX_SECRET_BYTES} bytes on stdin, more than a secret — pipe the secret alone`,
      );
    chunks.push(buffer);
  }
  const secret = withoutFinalLineBreak(Buffer.concat(chunks).toString("utf8"));
  if (secret === "")
    throw new SvcError(
      "usage",
      "--secret -: nothing on stdin — pipe the secret in, or give --secret-file <path>",
    );
  return secret;
}
