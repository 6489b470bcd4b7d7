// `node scripts/testDurations.mjs`: writes test/fileDurations.json, the seconds each test file took in the
// last whole run (vitest's record of it, under node_modules/.vite/vitest/), for files that still exist. The
// suite's sequencer (test/helpers/durationSequencer.ts) starts the longest first where a clone has no
// record of its own. Run it after `npm test` when files were added or became much slower.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const cacheDir = "node_modules/.vite/vitest";
const results = readdirSync(cacheDir)
  .map((dir) => join(cacheDir, dir, "results.json"))
  .filter(existsSync);
if (results.length === 0) {
  process.stderr.write(`no vitest record under ${cacheDir}: run npm test first\n`);
  process.exit(1);
}
const durations = {};
for (const file of results)
  for (const [key, result] of JSON.parse(readFileSync(file, "utf8")).results) {
    const path = key.slice(key.indexOf(":") + 1);
    if (existsSync(path) && typeof result.duration === "number")
      durations[path] = Math.round(result.duration / 100) / 10;
  }
const sorted = Object.fromEntries(Object.entries(durations).sort(([a], [b]) => a.localeCompare(b)));
writeFileSync("test/fileDurations.json", `${JSON.stringify(sorted, null, 1)}\n`);
process.stdout.write(`test/fileDurations.json: ${Object.keys(sorted).length} files\n`);
