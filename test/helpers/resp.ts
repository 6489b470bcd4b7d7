/** What a test proxy in front of Redis reads of the RESP protocol. */

/** One command the client sent (an array of bulk strings), and its length in bytes; undefined until whole. */
export function parseCommand(buffer: Buffer): { args: string[]; length: number } | undefined {
  const line = (from: number) => {
    const end = buffer.indexOf("\r\n", from);
    return end < 0 ? undefined : { text: buffer.subarray(from, end).toString(), next: end + 2 };
  };
  const head = line(0);
  if (head === undefined) return undefined;
  if (!head.text.startsWith("*")) return { args: head.text.split(" "), length: head.next }; // inline
  const args: string[] = [];
  let at = head.next;
  for (let i = 0; i < Number(head.text.slice(1)); i++) {
    const size = line(at);
    if (size === undefined) return undefined;
    const length = Number(size.text.slice(1));
    if (buffer.length < size.next + length + 2) return undefined;
    args.push(buffer.subarray(size.next, size.next + length).toString());
    at = size.next + length + 2;
  }
  return { args, length: at };
}

/** The length in bytes of the first whole reply (RESP2 or RESP3) in `buffer`; undefined until whole. */
export function replyLength(buffer: Buffer, from = 0): number | undefined {
  const end = buffer.indexOf("\r\n", from);
  if (end < 0) return undefined;
  const type = String.fromCharCode(buffer[from] as number);
  const value = Number(buffer.subarray(from + 1, end).toString());
  const next = end + 2;
  if ("$!=".includes(type)) {
    if (value < 0) return next - from;
    return buffer.length < next + value + 2 ? undefined : next + value + 2 - from;
  }
  const items = "*~>".includes(type) ? value : "%|".includes(type) ? value * 2 : 0;
  let at = next;
  for (let i = 0; i < Math.max(0, items); i++) {
    const length = replyLength(buffer, at);
    if (length === undefined) return undefined;
    at += length;
  }
  // An attribute comes before the reply it describes.
  if (type === "|") {
    const length = replyLength(buffer, at);
    return length === undefined ? undefined : at + length - from;
  }
  return at - from;
}
