/**
 * Memory of pending coalescing groups: `node --expose-gc --import tsx bench/coalesce.ts [groups] [light|actor]`.
 * Opens N groups (one ~1 KB pull_request-like event each, real timers with the default 30 s / 300 s
 * windows), reports RSS and heap, then flushes them all and checks each group dispatched exactly once.
 */
import { createActor, fromCallback } from "xstate";
import { createCoalescer } from "../src/actors/coalescer.js";
import type { Route } from "../src/config/sections/webhook.js";
import type { AcceptedEvent } from "../src/streams/context.js";

const groups = Number(process.argv[2] ?? 100_000);
const mode = process.argv[3] === "actor" ? "actor" : "light";
const route: Route = {
  deliver: "log",
  deliver_only: false,
  mirror_to_session: false,
  coalesce: { key: "pull_request.number", window_seconds: 30, max_wait_seconds: 300 },
};

function event(n: number): AcceptedEvent {
  const payload = {
    action: "synchronize",
    number: n,
    pull_request: {
      number: n,
      title: `Change ${n}: ${"x".repeat(Number(process.env.TITLE ?? 600))}`,
      head: { sha: n.toString(16).padStart(40, "0") },
    },
    repository: { full_name: "octo/repo" },
    sender: { login: "someone" },
  };
  return {
    routeName: "github",
    route,
    profile: "default",
    event: "pull_request",
    deliveryId: `d-${n}`,
    payload,
    headers: {
      "x-github-event": "pull_request",
      "x-github-delivery": `d-${n}`,
      "content-type": "application/json",
    },
    prompt: `Review PR #${n}: Change ${n}`,
    extra: {},
    receivedAt: Date.now(),
  };
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const gc = (globalThis as { gc?: () => void }).gc;
gc?.();
const before = process.memoryUsage();
let fired = 0;
const parent = mode === "actor" ? createActor(fromCallback(() => {})).start() : undefined;
const coalescer = createCoalescer({
  dispatch: () => {
    fired += 1;
  },
  ...(parent === undefined ? {} : { parent, actorGroupLimit: groups }),
});
const started = performance.now();
for (let n = 0; n < groups; n++) coalescer.offer(event(n));
const openMs = performance.now() - started;
gc?.();
const after = process.memoryUsage();
console.log(
  `${mode} groups: ${coalescer.pendingCount()} pending, opened in ${openMs.toFixed(0)} ms; ` +
    `RSS ${mb(after.rss)} (baseline ${mb(before.rss)}), heap used ${mb(after.heapUsed)}`,
);
const flushStart = performance.now();
coalescer.flushAll();
console.log(
  `flushAll: ${fired} dispatched in ${(performance.now() - flushStart).toFixed(0)} ms; pending now ${coalescer.pendingCount()}`,
);
if (fired !== groups) process.exitCode = 1;
process.exit();
