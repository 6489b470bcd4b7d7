/**
 * A request's CPU split into the parts of its work, from `perf script`'s call stacks (`bench/perfRecord.ts`):
 * each sample goes to the first part whose pattern a frame of its stack matches, in the order below (the
 * answer's `send` runs inside the body's callback, so it is looked for first). The same patterns fit svc's
 * gateway and the obligations bound (`bench/obligations.ts`), so the two splits compare part by part.
 */

interface Part {
  readonly name: string;
  readonly frame: RegExp;
}

const PARTS: readonly Part[] = [
  { name: "the answer's send (kernel: TCP to wrk's socket)", frame: /^__send$|^__sys_sendto$/ },
  { name: "reading the request (recv)", frame: /^__libc_recv$|^__sys_recvfrom$/ },
  { name: "HMAC-SHA256 and its compare", frame: /Hmac|hmac|sha256_block|TimingSafeEqual/ },
  { name: "JSON.parse and the number-keeping scan", frame: /Builtin_JsonParse|parseJson/ },
  { name: "the turn's end (history, log, journal writes)", frame: /processImmediate/ },
  { name: "the request's head (header copy, checks, route)", frame: /large_handler<uWS_App_/ },
  { name: "the body's other stages and the answer", frame: /res_onData/ },
  { name: "garbage collection outside those", frame: /Scaveng|MarkCompact|Heap::Collect|ConcurrentMarking/ },
];
const REST = "the event loop, epoll and the rest";

/** One stack per sample: `perf script -F ip,sym` prints a frame per line and a blank line after each. */
function stacksOf(script: string): string[][] {
  const stacks: string[][] = [];
  let current: string[] = [];
  for (const line of script.split("\n")) {
    const text = line.trim();
    if (text === "") {
      if (current.length > 0) stacks.push(current);
      current = [];
      continue;
    }
    const space = text.indexOf(" ");
    current.push((space < 0 ? text : text.slice(space + 1)).replace(/\+0x[0-9a-f]+.*$/, ""));
  }
  if (current.length > 0) stacks.push(current);
  return stacks;
}

/** µs per request in each part: `perf script -F ip,sym` text, and the request's CPU (µs, under perf). */
export function perfParts(script: string, usPerRequest: number): Array<{ part: string; us: number }> {
  const stacks = stacksOf(script);
  const counts = new Map<string, number>([...PARTS.map((p) => [p.name, 0] as const), [REST, 0]]);
  for (const stack of stacks) {
    const part = PARTS.find((p) => stack.some((frame) => p.frame.test(frame)))?.name ?? REST;
    counts.set(part, (counts.get(part) ?? 0) + 1);
  }
  const total = Math.max(1, stacks.length);
  return [...counts].map(([part, count]) => ({ part, us: (usPerRequest * count) / total }));
}
