import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { knownKeysAt } from "../../../src/config/knownKeys.js";
import { configSchema } from "../../../src/config/schema.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

const ROOT = join(import.meta.dirname, "../../..");
const FILES = [
  "README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];
const TOP_LEVEL = new Set(knownKeysAt(configSchema as never, []));

/** Every ```yaml block of the README and docs/ whose top-level keys are config.yaml's, with where it is. */
function configBlocks(): Array<{ at: string; text: string }> {
  const blocks: Array<{ at: string; text: string }> = [];
  for (const file of FILES) {
    const markdown = readFileSync(join(ROOT, file), "utf8");
    for (const match of markdown.matchAll(/^```ya?ml\n([\s\S]*?)^```/gm)) {
      const text = match[1] as string;
      const parsed: unknown = parse(text);
      // Another program's YAML (a Prometheus scrape configuration, alert rules) is not svc's.
      if (typeof parsed !== "object" || parsed === null) continue;
      if (!Object.keys(parsed).every((key) => TOP_LEVEL.has(key))) continue;
      blocks.push({ at: `${file}:${markdown.slice(0, match.index).split("\n").length}`, text });
    }
  }
  return blocks;
}

let home: TempHome | undefined;
afterEach(() => {
  home?.cleanup();
  home = undefined;
});

// A user copies an example into config.yaml and sets the variables it names: `svc config check` takes it.
// Examples of one section alone leave the webhook adapter off, which WEBHOOK_ENABLED=true turns on (a
// config.yaml with nothing to run is refused).
describe("every config.yaml example of the README and docs/ passes svc config check", {
  timeout: 60_000,
}, () => {
  const blocks = configBlocks();
  it("finds the examples", () => {
    expect(blocks.length).toBeGreaterThan(20);
  });
  for (const { at, text } of blocks) {
    it(at, async () => {
      home = tempHome();
      home.write("config.yaml", text);
      const variables = [...text.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1] as string);
      const env = Object.fromEntries(variables.map((name) => [name, `example-${name.toLowerCase()}`]));
      const res = await svc(home, ["config", "check"], { env: { ...env, WEBHOOK_ENABLED: "true" } });
      if (/^\s*backend: redis/m.test(text)) {
        // No Redis runs here: the file itself is fine when reaching Redis is the one problem.
        const problems = res.stderr.replace(/^Warning: [^\n]*\n/gm, "");
        expect(problems).toMatch(/^[^\n]*: state\.redis_url: cannot reach redis:\/\/[^\n]*\n$/);
        expect(res.stdout).toContain("1 problem");
        return;
      }
      expect({ code: res.code, stderr: res.stderr.replace(/^Warning: [^\n]*\n/gm, "") }).toEqual({
        code: 0,
        stderr: "",
      });
      expect(res.stdout).toMatch(/^ok: /);
    });
  }
});
