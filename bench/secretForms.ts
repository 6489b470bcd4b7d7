/**
 * The cost of a secret's forms, in one process: `node --import tsx bench/secretForms.ts [tree ...]`.
 * Times `withoutSecret` (the delivery history's payload redaction, run for every accepted request) with a
 * 64-hex route secret on a 1 KB and a 23 KB push payload, and a `secretScrubber` (the echo reply, a tool result,
 * an MCP stderr line) with that secret and with eight loaded 40-hex credentials, on the 23 KB payload as JSON
 * (`\n` escapes in its commit messages) and as plain text, with three of those credentials on a 6 KB payload as
 * Python writes it (two `\u` escapes, and one with every commit's second line in `\u`-escaped Russian), and
 * with sixteen 40-hex credentials, one 8,000-character base64 key, one token of 600 and of 1,200 characters, and a
 * 40-hex credential with two 300-character tokens on that payload, and with 100 and 2,500
 * 64-hex secrets (as many stored
 * subscriptions) on a JSON log line with a `\u` escape and the 23 KB JSON. A tree whose first call throws or takes
 * a second or more is not timed further: its row says so. Each further tree (a checkout with `node_modules`,
 * e.g. a `git worktree` of an older commit) is timed alongside this one, in alternating batches so that a
 * loaded machine disturbs them alike; the best batch of each is printed, in microseconds per call, and the
 * trees' outputs are checked to be the same.
 */
import { createHash } from "node:crypto";
import { join, resolve } from "node:path";

type Scrubber = (text: string) => string;
interface Tree {
  readonly name: string;
  readonly withoutSecret: (body: Buffer, secret: string | undefined) => Buffer;
  readonly secretScrubber: (secrets: readonly string[]) => Scrubber;
}

const ROUNDS = 60;
const BATCH = 50;

async function tree(root: string): Promise<Tree> {
  const payload = await import(join(root, "src/gateway/payloadSecret.ts"));
  const credentials = await import(join(root, "src/io/credentials.ts"));
  return { name: root, withoutSecret: payload.withoutSecret, secretScrubber: credentials.secretScrubber };
}

const hex = (seed: string, length: number) =>
  createHash("sha256").update(seed).digest("hex").repeat(2).slice(0, length);

/** A push event of about `bytes` as GitHub sends it: hex ids, URLs, messages with line breaks. */
function pushPayload(bytes: number): string {
  const commits: object[] = [];
  for (let i = 0; JSON.stringify(commits).length < bytes - 400; i++)
    commits.push({
      id: hex(`commit ${i}`, 40),
      tree_id: hex(`tree ${i}`, 40),
      message: `Fix the retry in worker ${i}\n\nThe queue drained before the ack arrived.\nSigned-off-by: Dev <dev@example.com>`,
      timestamp: "2026-12-06T22:25:34Z",
      url: `https://github.com/acme/widgets/commit/${hex(`commit ${i}`, 40)}`,
      author: { name: "Dev", email: "dev@example.com", username: "dev" },
      modified: [`src/worker${i}.ts`, "README.md"],
    });
  return JSON.stringify({
    ref: "refs/heads/main",
    before: hex("before", 40),
    after: hex("after", 40),
    repository: { full_name: "acme/widgets", html_url: "https://github.com/acme/widgets" },
    commits,
  });
}

/** The best microseconds per call of each of `calls`, run in alternating batches. */
function best(calls: ReadonlyArray<() => unknown>): number[] {
  for (const call of calls) for (let i = 0; i < 5 * BATCH; i++) call();
  const micros = calls.map(() => Number.POSITIVE_INFINITY);
  for (let round = 0; round < ROUNDS; round++)
    calls.forEach((call, k) => {
      const started = process.hrtime.bigint();
      for (let i = 0; i < BATCH; i++) call();
      const each = Number(process.hrtime.bigint() - started) / BATCH / 1000;
      micros[k] = Math.min(micros[k] as number, each);
    });
  return micros;
}

/** A first call past this is not timed in batches (an older tree's compiling of all escaped echoes at once). */
const SLOW_FIRST_MS = 1000;

function row(
  label: string,
  trees: readonly Tree[],
  run: (t: Tree) => () => unknown,
  output: (t: Tree) => string,
) {
  // Each tree's first call (its scrubber's first text) alone: one that throws or takes seconds is not batched.
  const first = trees.map((t) => {
    const started = performance.now();
    try {
      return { out: output(t), ms: performance.now() - started };
    } catch (err) {
      return { failed: (err as Error).name, ms: performance.now() - started };
    }
  });
  const batched = (k: number) => "out" in (first[k] as object) && (first[k]?.ms as number) < SLOW_FIRST_MS;
  const micros = best(trees.filter((_, k) => batched(k)).map(run));
  const times = trees
    .map((_, k) => {
      const once = first[k] as { out?: string; failed?: string; ms: number };
      if (batched(k)) return (micros.shift() as number).toFixed(2).padStart(9);
      return `${once.failed ?? "first call"} in ${Math.round(once.ms)} ms`.padStart(9);
    })
    .join(" ");
  const outputs = new Set(first.flatMap((once) => ("out" in once ? [once.out] : [])));
  console.log(`${label.padEnd(44)}${times}${outputs.size > 1 ? "   (outputs differ)" : ""}`);
}

const trees = [
  await tree(resolve(import.meta.dirname, "..")),
  ...(await Promise.all(process.argv.slice(2).map((dir) => tree(resolve(dir))))),
];
const routeSecret = hex("route secret", 64);
const loaded = Array.from({ length: 8 }, (_, i) => hex(`credential ${i}`, 40));
/** Short secrets have short base64 forms, which the one-pass check samples for more often. */
const short = ["smtp-pass-2024", "Zx9!k2LmQp7rT4vW", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"];
const small = pushPayload(1024);
const large = pushPayload(23 * 1024);
const plain = large.replaceAll("\\n", " ");
/** Every stored subscription's secret, as a gateway with thousands of subscriptions redacts each text of. */
const subscriptions = Array.from({ length: 2500 }, (_, i) => hex(`subscription ${i}`, 64));
/** A 6 KB push payload as Python's json.dumps writes it: an author's `é` and a message's `✓` as `\u` escapes. */
const webhook = pushPayload(6 * 1024);
const fewEscapes = webhook
  .replace('"name":"Dev"', '"name":"D\\u00e9v"')
  .replace("Fix the", "\\u2713 Fix the");
/** The same with each commit message's second line in Russian, every letter a `\u` escape. */
const manyEscapes = webhook.replaceAll(
  "The queue drained before the ack arrived.",
  "Очередь опустела до подтверждения.".replace(
    /[^ .]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  ),
);
/** Sixteen loaded 40-hex credentials: the most one expression of all escaped echoes was made of. */
const sixteen = Array.from({ length: 16 }, (_, i) => hex(`credential ${i}`, 40));
/** A credential-named .env value of 8,000 base64 characters (a service account's key). */
const longKey = Buffer.from(Array.from({ length: 188 }, (_, i) => hex(`key ${i}`, 64)).join(""), "hex")
  .toString("base64")
  .slice(0, 8000);
/** An OAuth access token or a JWT of `length` characters (base64url, with dots). */
const token = (seed: string, length: number) =>
  Buffer.from(
    Array.from({ length: Math.ceil(length / 42) }, (_, i) => hex(`${seed} ${i}`, 64)).join(""),
    "hex",
  )
    .toString("base64url")
    .slice(0, length)
    .replace(/^(.{36})(.{200})/, "$1.$2.");
/** An MCP server's JSON log line on stderr, as Python's json.dumps writes `café`. */
const escapedLine = '{"level":"info","msg":"starting caf\\u00e9 server"}';

console.log(`µs per call, best of ${ROUNDS} batches of ${BATCH}:`);
for (const [i, t] of trees.entries()) console.log(`  [${i}] ${t.name}`);
console.log(`${"".padEnd(44)}${trees.map((_, i) => `[${i}]`.padStart(9)).join(" ")}`);
for (const [label, body] of [
  ["withoutSecret, 64-hex secret, 1 KB body", Buffer.from(small)],
  ["withoutSecret, 64-hex secret, 23 KB body", Buffer.from(large)],
] as const)
  row(
    label,
    trees,
    (t) => () => t.withoutSecret(body, routeSecret),
    (t) => t.withoutSecret(body, routeSecret).toString(),
  );
for (const [label, secrets, text] of [
  ["scrub, 64-hex secret, 23 KB JSON", [routeSecret], large],
  ["scrub, 64-hex secret, 23 KB plain", [routeSecret], plain],
  ["scrub, 8 x 40-hex credentials, 23 KB JSON", loaded, large],
  ["scrub, 8 x 40-hex credentials, 23 KB plain", loaded, plain],
  ["scrub, 3 short secrets, 23 KB JSON", short, large],
  ["scrub, 3 short secrets, 23 KB plain", short, plain],
  ["scrub, 3 x 40-hex, 6 KB JSON, 2 \\u", loaded.slice(0, 3), fewEscapes],
  ["scrub, 3 x 40-hex, 6 KB JSON, many \\u", loaded.slice(0, 3), manyEscapes],
  ["scrub, 16 x 40-hex, 6 KB JSON, 2 \\u", sixteen, fewEscapes],
  ["scrub, 16 x 40-hex, 6 KB JSON, many \\u", sixteen, manyEscapes],
  ["scrub, 8,000-char key, 6 KB JSON, 2 \\u", [longKey], fewEscapes],
  ["scrub, 8,000-char key, 6 KB JSON, many \\u", [longKey], manyEscapes],
  ["scrub, 600-char token, 6 KB JSON, many \\u", [token("token 600", 600)], manyEscapes],
  ["scrub, 1,200-char token, 6 KB JSON, many \\u", [token("token 1200", 1200)], manyEscapes],
  [
    "scrub, 40-hex + 2 x 300-char, 6 KB, many \\u",
    [loaded[0] as string, token("a", 300), token("b", 300)],
    manyEscapes,
  ],
  ["scrub, 100 x 64-hex secrets, a line with \\u", subscriptions.slice(0, 100), escapedLine],
  ["scrub, 2,500 x 64-hex secrets, a line with \\u", subscriptions, escapedLine],
  ["scrub, 2,500 x 64-hex secrets, 23 KB JSON", subscriptions, large],
] as const) {
  const scrubbers = new Map(trees.map((t) => [t, t.secretScrubber(secrets)]));
  row(
    label,
    trees,
    (t) => {
      const scrubbed = scrubbers.get(t) as Scrubber;
      return () => scrubbed(text);
    },
    (t) => (scrubbers.get(t) as Scrubber)(text),
  );
}

/**
 * Texts of a megabyte with many finds, and secrets beginning with `\` on a run of backslashes: each call alone,
 * the best of three in milliseconds (a tree whose first call takes `SLOW_ONCE_MS` or more is timed once).
 */
const SLOW_ONCE_MS = 10_000;
const many = "abcd1234,".repeat(111_000);
const fifty = Array.from({ length: 50 }, (_, i) => `s${i}cr3t-${(i * 7919).toString(36)}-k3y`);
const fiftyLine = Array.from({ length: 41_700 }, (_, i) =>
  i % 10 === 0
    ? `\\u0073${(fifty[i % 50] as string).slice(1)} \\u00e9`
    : `${fifty[i % 50] as string} \\u00e9`,
).join(" ");
console.log(`\nms per call, best of 3 (one call if it took ${SLOW_ONCE_MS / 1000} s or more):`);
for (const [label, secrets, text] of [
  ["scrub, 111,000 finds and a \\, 1 MB line", ["abcd1234"], `${many}\\`],
  [
    "scrub, a webhook body of 100,000 finds, 900 KB",
    ["abcd1234"],
    `{"note":"C:\\\\tmp","x":"${"abcd1234,".repeat(100_000)}"}`,
  ],
  ["scrub, 50 secrets, 1 MB line with \\u", fifty, fiftyLine],
  ["scrub, \\abcd1 on 3,200 backslashes", ["\\abcd1"], `x${"\\".repeat(3200)}`],
  ["scrub, \\\\ab on 800 backslashes", ["\\\\ab"], `x${"\\".repeat(800)}`],
] as const) {
  const outputs = new Set<string>();
  const times = trees.map((t) => {
    const scrubbed = t.secretScrubber(secrets);
    let ms = Number.POSITIVE_INFINITY;
    for (let round = 0; round < 3; round++) {
      const started = performance.now();
      outputs.add(scrubbed(text));
      ms = Math.min(ms, performance.now() - started);
      if (ms >= SLOW_ONCE_MS) break;
    }
    return ms.toFixed(1).padStart(9);
  });
  console.log(`${label.padEnd(44)}${times.join(" ")}${outputs.size > 1 ? "   (outputs differ)" : ""}`);
}
