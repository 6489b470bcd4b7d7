/**
 * A history line cut short while the gateway runs (the file truncated under it): the writer appends where
 * the file now ends, so the next record's line is glued to the cut one. Every record's line begins with
 * this head (historyLine), so the glued record starts at one of its later occurrences.
 */
const RECORD_HEAD = '{"kind":"';
const RECORD_HEAD_BYTES = Buffer.from(RECORD_HEAD);
/** The whole heads of the kinds the gateway writes: a payload's `{"kind":"Deployment"` is none of them. */
const KIND_HEADS = ["request", "run", "delivery", "not_recorded"].map((kind) =>
  Buffer.from(`${RECORD_HEAD}${kind}","id":`),
);

/** Whether a line (`buf[start, end)`) holds a record's head after its start: it may be a glued one. */
export function holdsLaterHead(buf: Buffer, start: number, end: number): boolean {
  for (let at = buf.indexOf(RECORD_HEAD_BYTES, start + 1); at >= 0 && at < end; ) {
    if (
      KIND_HEADS.some(
        (head) => at + head.length <= end && buf.compare(head, 0, head.length, at, at + head.length) === 0,
      )
    )
      return true;
    at = buf.indexOf(RECORD_HEAD_BYTES, at + 1);
  }
  return false;
}

/**
 * The record glued after a cut line, read with `read` (which throws on a line that is no record); undefined
 * when there is none. The first later head whose text reads is it: one inside the cut line leaves the rest
 * of that line before the glued record, which does not read, and one in the glued record's payload is after it.
 */
export function gluedRecord<T>(line: string, read: (text: string) => T): T | undefined {
  for (let at = line.indexOf(RECORD_HEAD, 1); at > 0; at = line.indexOf(RECORD_HEAD, at + 1)) {
    try {
      return read(line.slice(at));
    } catch {
      // not where the glued record starts
    }
  }
  return undefined;
}
