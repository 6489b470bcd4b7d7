/**
 * `npm run build && node --import tsx bench/jsonNumbers.ts [rounds] [module]`: median CPU per parse of
 * `parseJson` (numbers and key order as the sender wrote them) beside plain `JSON.parse`, on real payloads
 * with no number to keep (the common path: one scan of the text) and on bodies full of numbers like `1.0`,
 * of objects holding one, and of keys of digits (the walk that records them); then `stringifyJson` of
 * each parsed body (the script's stdin) beside `JSON.stringify`. It measures the built
 * dist/streams/jsonNumbers/index.js, as the gateway runs it (run through tsx, a module can be compiled
 * another way and cost several times more); `module`: another build's jsonNumbers/index.js (jsonNumbers.js
 * in a build from before it was split in files) instead (a copy of an older
 * dist/), for an A/B on one machine. CPU time of this process (`process.cpuUsage`, the garbage collector's
 * threads included), so a shared machine moves it less than wall time.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

type ExampleSet = { name: string; examples: Array<Record<string, unknown>> };
const sets = createRequire(import.meta.url)("@octokit/webhooks-examples") as ExampleSet[];
const example = (name: string, action?: string): string => {
  const found = sets
    .find((set) => set.name === name)
    ?.examples.find((e) => action === undefined || e.action === action);
  if (found === undefined) throw new Error(`no @octokit/webhooks-examples payload for ${name}`);
  return JSON.stringify(found, null, 2);
};

const rounds = Number(process.argv[2] ?? 15);
const modulePath = process.argv[3];
const { parseJson, stringifyJson } = (await import(
  pathToFileURL(modulePath ?? new URL("../dist/streams/jsonNumbers/index.js", import.meta.url).pathname).href
)) as { parseJson: (text: string) => unknown; stringifyJson: (value: unknown) => string | undefined };

const series = (n: number, item: (i: number) => string) =>
  Array.from({ length: n }, (_, i) => item(i)).join(",");
const bodies: Record<string, string> = {
  "github push (7 KB)": example("push"),
  "github pull_request.opened": example("pull_request", "opened"),
  "gitlab push": readFileSync(new URL("../test/fixtures/gitlab/push.json", import.meta.url), "utf8"),
  "alert, 2000 samples like 0.50": `{"alert":"cpu","values":[${series(2000, (i) => `[${1700000000 + i},${(i % 100) / 100 + 0.5}0]`)}]}`,
  '1 MiB: 100k {"x":1.0}': `{"a":[${series(100_000, () => '{"x":1.0}')}]}`,
  "1 MiB: 150k floats i.0": `{"a":[${series(150_000, (i) => `${i}.0`)}]}`,
  "1.5 MiB: 150k digit keys": `{${series(150_000, (i) => `"${i}":1`)}}`,
  "1 MiB: 100k plain objects": `{"a":[${series(100_000, (i) => `{"x":${i},"s":"v${i}"}`)}]}`,
};

/**
 * Milliseconds of CPU per call of `run`: the median of `rounds` samples, each of as many calls as take
 * about 5 ms (a shared machine's bursts and a collection of the previous sample's garbage land in a few).
 */
function cpuPerCall(run: () => unknown): number {
  for (let r = 0; r < 5; r++) run();
  const cpu = () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  };
  let t = cpu();
  run();
  const calls = Math.max(1, Math.round(5 / Math.max(cpu() - t, 0.001)));
  const samples: number[] = [];
  for (let r = 0; r < rounds; r++) {
    t = cpu();
    for (let c = 0; c < calls; c++) run();
    samples.push((cpu() - t) / calls);
  }
  return samples.sort((x, y) => x - y)[Math.floor(rounds / 2)] as number;
}

const rows = Object.entries(bodies).map(([name, body]) => {
  const ours = cpuPerCall(() => parseJson(body));
  const plain = cpuPerCall(() => JSON.parse(body));
  return {
    body: name,
    "parseJson ms": ours.toFixed(3),
    "JSON.parse ms": plain.toFixed(3),
    ratio: (ours / plain).toFixed(1),
  };
});
console.table(rows);

// The other way: the payload as the script's stdin (and `{__raw__}`), numbers and key order as sent.
const written = Object.entries(bodies).map(([name, body]) => {
  const kept = parseJson(body);
  const plain: unknown = JSON.parse(body);
  const ours = cpuPerCall(() => stringifyJson(kept));
  const theirs = cpuPerCall(() => JSON.stringify(plain));
  return {
    body: name,
    "stringifyJson ms": ours.toFixed(3),
    "JSON.stringify ms": theirs.toFixed(3),
    ratio: (ours / theirs).toFixed(1),
  };
});
console.table(written);
