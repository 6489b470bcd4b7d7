/**
 * The last lines a failed process wrote on stderr, as a message quotes them: a stdio MCP server's
 * (`io/mcp/connect.ts`), a command agent's (`actors/agent/command.ts`). Often they say why it failed.
 */

/** How many of a process's last stderr lines a message quotes. */
export const STDERR_TAIL_LINES = 5;

const STACK_FRAME = /^\s+at \S/;
const NODE_TRAILER = /^Node\.js v\d+\.\d+\.\d+$/;

/** The longest a trace's block of fields grows as one line before the rest is left out (`…`). */
const FIELDS_CHARS = 200;

/**
 * An error line as node prints one with fields and no frames (thrown from an fs callback, whose error has no stack
 * but its message): `[Error: ENOENT: …] {`, `TypeError: … {`, `SystemError [ERR_X]: … {`, not indented.
 */
const ERROR_OPENING_FIELDS = /^\[?(?:[A-Za-z_$][\w$]*)?Error(?: \[\w+\])?: .* \{$/;

/** Tails whose last entry is a trace's block of fields that has not closed yet (its `}` not seen). */
const openFields = new WeakSet<string[]>();
/**
 * Tails whose open block an error line opened (`ERROR_OPENING_FIELDS`), with that line as written: a frame as the
 * block's first line shows its ` {` was the message's own, and the line is kept as it came.
 */
const openedByError = new WeakMap<string[], string>();

/**
 * Keeps a stderr line in the tail a message quotes (the last STDERR_TAIL_LINES). A Node.js program that
 * throws prints its error, then a stack of `    at ...` frames and `Node.js v20...`: only the first frame
 * of a run of them is kept and the version line is left out, so the error line stays in the tail. An error
 * with fields (a system error's errno, code, syscall and path) ends its last frame with ` {`, the fields on
 * lines of their own and a `}`: that block is kept as one line, `{ errno: -2, code: 'ENOENT', … }`, so it
 * cannot push the error line out either. So is the block an error with no frames opens on its own line ending in
 * ` {` (`[Error: ENOENT: …] {`, thrown from an fs callback): that line, without its ` {`, is the error line.
 */
export function keepStderrLine(tail: string[], line: string): void {
  // The fields are indented and the block ends with a `}` of its own: a line of another kind ends it too.
  if (openFields.has(tail) && line !== "}" && !/^\s/.test(line)) openFields.delete(tail);
  const errorLine = openedByError.get(tail);
  openedByError.delete(tail);
  if (errorLine !== undefined && openFields.has(tail) && STACK_FRAME.test(line)) {
    // An error whose message ends in ` {`, its frames after it: no block of fields.
    openFields.delete(tail);
    tail.pop();
    tail[tail.length - 1] = errorLine;
  }
  if (openFields.has(tail)) {
    const fields = tail.at(-1) ?? "{";
    const cut = fields.endsWith(" …");
    if (line === "}") {
      openFields.delete(tail);
      tail[tail.length - 1] = `${fields} }`;
    } else if (!cut) {
      const longer = `${fields} ${line.trim()}`;
      tail[tail.length - 1] = longer.length > FIELDS_CHARS ? `${fields} …` : longer;
    }
    return;
  }
  if (NODE_TRAILER.test(line)) return;
  const last = tail.at(-1);
  const frame = STACK_FRAME.test(line);
  if (frame && line.endsWith(" {")) {
    if (last === undefined || !STACK_FRAME.test(last)) push(tail, line.slice(0, -2));
    push(tail, "{");
    openFields.add(tail);
    return;
  }
  if (frame && last !== undefined && STACK_FRAME.test(last)) return;
  // An error with fields and no frames: the error line kept, its block of fields one line after it.
  if (ERROR_OPENING_FIELDS.test(line)) {
    push(tail, line.slice(0, -2));
    push(tail, "{");
    openFields.add(tail);
    openedByError.set(tail, line);
    return;
  }
  push(tail, line);
}

function push(tail: string[], line: string): void {
  tail.push(line);
  if (tail.length > STDERR_TAIL_LINES) tail.shift();
}
const STDERR_TAIL_CHARS = 400;

/** The last stderr lines of a process as a message quotes them: joined with ` | `, the last 400 characters. */
export function joinStderr(lines: readonly string[]): string {
  const stderr = lines.join(" | ");
  if (stderr.length <= STDERR_TAIL_CHARS) return stderr;
  // One fewer where the cut would keep the second half of an emoji alone (shown as U+FFFD).
  const first = stderr.charCodeAt(stderr.length - STDERR_TAIL_CHARS);
  return `...${stderr.slice(first >= 0xdc00 && first <= 0xdfff ? 1 - STDERR_TAIL_CHARS : -STDERR_TAIL_CHARS)}`;
}

/** All a process wrote on stderr, quoted as its last lines are (blank lines left out): "" for none. */
export function stderrTail(stderr: string): string {
  const tail: string[] = [];
  for (const line of stderr.split(/\r?\n/)) if (line.trim() !== "") keepStderrLine(tail, line);
  return joinStderr(tail);
}
