import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { knownKeysAt } from "../../../src/config/knownKeys.js";
import { configSchema } from "../../../src/config/schema.js";
import {
  PLATFORM_NAMES,
  PLATFORM_SCHEMAS,
  REQUIRED_WHEN_ENABLED,
} from "../../../src/config/sections/platforms.js";
import { routeSchema } from "../../../src/config/sections/webhook.js";

const DOCS = join(import.meta.dirname, "../../../docs");

/** The rows of the first table after `heading` (cells trimmed, header and separator rows dropped). */
function tableAfter(file: string, heading: string): string[][] {
  const text = readFileSync(join(DOCS, file), "utf8");
  const start = text.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`${file}: no heading ${heading}`);
  const lines = text.slice(start + heading.length + 2).split("\n");
  const first = lines.findIndex((line) => line.startsWith("|"));
  const rows: string[][] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith("|")) break;
    // `\|` inside a cell is an escaped pipe (`uws` \| `node`), not a column break.
    rows.push(
      line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim()),
    );
  }
  return rows;
}

const firstCode = (cell: string) => /`([^`]*)`/.exec(cell)?.[1];
const asText = (value: unknown) => (typeof value === "object" ? JSON.stringify(value) : String(value));

/** Documented key → documented default (the first `code` of the Default column), per table. */
function documented(heading: string): Map<string, string | undefined> {
  return new Map(
    tableAfter("configuration.md", heading).map(([key, , fallback]) => [
      firstCode(key ?? "") ?? "",
      firstCode(fallback ?? ""),
    ]),
  );
}

const defaults = configSchema.parse({});
const routeDefaults = routeSchema.parse({}) as Record<string, unknown>;

describe("docs/configuration.md lists exactly the schema's keys with its defaults", () => {
  const sections = [
    {
      heading: "## `platforms.webhook`",
      path: ["platforms", "webhook"],
      values: defaults.platforms.webhook as Record<string, unknown>,
      // Described in the prose above the table (keys may sit under it), not a setting of its own.
      prose: ["extra"],
    },
    {
      heading: "## Routes (`platforms.webhook.routes.<name>`)",
      path: ["platforms", "webhook", "routes", "r"],
      values: routeDefaults,
      prose: [],
    },
    { heading: "## `agent`", path: ["agent"], values: defaults.agent as Record<string, unknown>, prose: [] },
    {
      heading: "## `gateway`",
      path: ["gateway"],
      values: defaults.gateway as Record<string, unknown>,
      prose: [],
    },
    { heading: "## `state`", path: ["state"], values: defaults.state as Record<string, unknown>, prose: [] },
  ];
  for (const { heading, path, values, prose } of sections) {
    it(`${heading}: every key, no other, and each schema default`, () => {
      const docs = documented(heading);
      const schemaKeys = knownKeysAt(configSchema as never, path).filter((key) => !prose.includes(key));
      expect([...docs.keys()].sort()).toEqual([...schemaKeys].sort());
      for (const key of schemaKeys) {
        if (values[key] === undefined) continue;
        expect({ key, documented: docs.get(key) }).toEqual({ key, documented: asText(values[key]) });
      }
    });
  }
});

describe("docs/delivery-targets.md 'Keys of each platform' matches the platform schemas", () => {
  const rows = new Map(
    tableAfter("delivery-targets.md", "## Keys of each platform").map(([name, keys, baseUrl]) => [
      firstCode(name ?? "") ?? "",
      { keys: keys ?? "", baseUrl: baseUrl ?? "" },
    ]),
  );
  const common = ["enabled", "home_channel", "timeout_seconds"];

  it("has one row per platform", () => {
    expect([...rows.keys()].sort()).toEqual([...PLATFORM_NAMES].sort());
  });

  for (const name of PLATFORM_NAMES) {
    it(`${name}: keys, required keys and defaults`, () => {
      const row = rows.get(name);
      if (row === undefined) throw new Error(`no row for ${name}`);
      const listed = [...row.keys.matchAll(/(\*\*)?`([a-z_]+)`(?:\*\*)?(?: \(`([^`]*)`)?/g)].map(
        ([, bold, key, fallback]) => ({ key: key as string, required: bold !== undefined, fallback }),
      );
      const schema = PLATFORM_SCHEMAS[name];
      const schemaKeys = knownKeysAt(schema as never, []);
      const hasBaseUrl = row.baseUrl !== "—";
      // forge_comment has no home channel (a comment goes to the pull request the route names).
      const shared = name === "forge_comment" ? common.filter((key) => key !== "home_channel") : common;
      const docKeys = [...shared, ...listed.map((k) => k.key), ...(hasBaseUrl ? ["base_url"] : [])];
      expect(new Set(docKeys)).toEqual(new Set(schemaKeys));

      const required = listed.filter((k) => k.required).map((k) => k.key);
      expect(required.sort()).toEqual([...REQUIRED_WHEN_ENABLED[name]].sort());

      const parsed = schema.parse({}) as Record<string, unknown>;
      for (const { key, fallback } of listed) {
        if (fallback !== undefined) expect({ key, fallback }).toEqual({ key, fallback: asText(parsed[key]) });
      }
      if (hasBaseUrl) {
        const url = firstCode(row.baseUrl);
        expect({ base_url: url }).toEqual({
          base_url: parsed.base_url === undefined ? undefined : asText(parsed.base_url),
        });
      }
    });
  }
});
