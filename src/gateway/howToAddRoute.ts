import { readFileSync } from "node:fs";
import { isCollection, isMap, isPair, isScalar, LineCounter, parseDocument, type YAMLMap } from "yaml";

/** The example route, its keys one level (two spaces) below its name. */
const EXAMPLE_ROUTE = [
  "github:",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: config interpolation syntax shown to the user
  "  secret: ${GITHUB_WEBHOOK_SECRET}",
  "  events: [pull_request]",
  '  prompt: "Review PR #{number}: {pull_request.title}"',
];

/** The whole example, `platforms:` down, each entry with the lines of what goes under it. */
const EXAMPLE: readonly string[] = [
  "platforms:",
  "  webhook:",
  "    enabled: true",
  "    host: 127.0.0.1   # this machine only; 0.0.0.0 for every interface",
  "    routes:",
  ...EXAMPLE_ROUTE.map((line) => `      ${line}`),
];

const SUBSCRIBE = "or create one without editing the file: svc webhook subscribe <name>";

/** Where the example's lines for what is missing go: under `platforms`, `platforms.webhook` or its `routes`. */
const LEVELS = ["platforms", "webhook", "routes"] as const;

/** Where in EXAMPLE the lines under each depth's part begin: `webhook:`, `routes:`, `github:`. */
const EXAMPLE_START = [0, 1, 4, 5] as const;

/**
 * The "No routes yet" hint. Without a config.yaml (or one with no `platforms`) it is the whole example, to go
 * at the end of the file with `platforms:` at column 0, a top-level key; when the file has part of
 * `platforms.webhook` already, only the rest of the example, indented as it goes under the deepest part the
 * file has (pasting a second `platforms:` makes the file invalid YAML, and replacing the file's block would
 * drop its other settings, such as `port:`). Either way with the `.env` line for the example's secret.
 *
 * `continuation`: the columns the log prints before each line of the message after its first
 * (`continuationColumns`: two in the text log, none in JSON). The lines to add are laid out that much further
 * left, so that as printed they stand at the columns they go at and paste as they are; lines that go left of
 * what the log prints before them (a file indented by one space) are printed right after it, and the message
 * says how many columns left of that they go.
 */
export function howToAddRoute(configFile: string, envFile: string, continuation = 0): string {
  const text = readText(configFile);
  const where = deepestWritten(text);
  if (where === undefined) {
    // `platforms:` goes at column 0, left of anything the log prints before the lines: they are printed
    // right after it, and the message says how far left they go.
    const notes = [
      ...(text === undefined ? [] : ["at the end of the file, platforms being a top-level key"]),
      ...(continuation === 0 ? [] : [goesLeft(continuation)]),
    ];
    return [
      `[webhook] No routes yet. Add one to ${configFile}, for example these lines${notes.length === 0 ? "" : ` (${notes.join("; ")})`}:`,
      ...EXAMPLE,
      secretLine(envFile),
      SUBSCRIBE,
    ].join("\n");
  }
  // The example's lines below the part the file has, moved to the column its entries are written at, less
  // what the log prints before them.
  const below = EXAMPLE.slice(EXAMPLE_START[where.depth]).map((line) => line.slice(2 * where.depth));
  const printed = Math.max(0, where.column - continuation);
  const moved = printed + continuation - where.column;
  const indent = " ".repeat(printed);
  const path = LEVELS.slice(0, where.depth).join(".");
  const place = moved === 0 ? where.place : `${where.place}; ${goesLeft(moved)}`;
  return [
    `[webhook] No routes yet. Add these lines under ${path} in ${configFile} (${place}):`,
    ...below.map((line) => indent + line),
    secretLine(envFile),
    SUBSCRIBE,
  ].join("\n");
}

function secretLine(envFile: string): string {
  return `and the route's secret to ${envFile}: GITHUB_WEBHOOK_SECRET=<the secret the sender signs with>`;
}

/** What the hint says of lines that go `columns` left of where the log prints them. */
function goesLeft(columns: number): string {
  return `each line goes ${columns} column${columns === 1 ? "" : "s"} left of where it is printed`;
}

interface Written {
  /** 1: `platforms` is written, 2: `platforms.webhook`, 3: `platforms.webhook.routes`. */
  readonly depth: 1 | 2 | 3;
  /** The column (from 0) the part's entries are written at, or go at when it has none. */
  readonly column: number;
  /** Where the lines go: after its entries' last line, or its key's line when it has none. */
  readonly place: string;
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

/** The deepest of `platforms`, `platforms.webhook`, `platforms.webhook.routes` the text writes, or undefined. */
function deepestWritten(text: string | undefined): Written | undefined {
  if (text === undefined) return undefined;
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines });
  if (doc.errors.length > 0 || !isMap(doc.contents)) return undefined;
  let found: Written | undefined;
  let map: YAMLMap = doc.contents;
  for (const [i, key] of LEVELS.entries()) {
    const pair = map.items.find((item) => isPair(item) && isScalar(item.key) && item.key.value === key);
    if (pair === undefined || !isScalar(pair.key) || pair.key.range == null) break;
    const depth = (i + 1) as Written["depth"];
    const keyColumn = lines.linePos(pair.key.range[0]).col - 1;
    const value = pair.value;
    if (isMap(value) && value.items.length > 0 && value.range != null && value.flow !== true) {
      const first = value.items[0]?.key;
      const column =
        isScalar(first) && first.range != null ? lines.linePos(first.range[0]).col - 1 : keyColumn + 2;
      found = {
        depth,
        column,
        place: `after line ${lastLineOf(text, lines, value.range[0], value.range[1])}`,
      };
      map = value;
      continue;
    }
    // Written with nothing under it (`webhook:` alone): its entries go a level below its key, after it. Written
    // as `{…}`: no line can be added under it until it is written one key a line.
    const keyLine = lines.linePos(pair.key.range[0]).line;
    const empty = value === null || (isScalar(value) && value.value === null);
    const emptyFlow = isCollection(value) && value.flow === true && value.items.length === 0;
    const path = LEVELS.slice(0, depth).join(".");
    const place = empty
      ? `after line ${keyLine}`
      : emptyFlow
        ? `after line ${keyLine}, in place of its {}`
        : `after line ${keyLine}, once ${path} is written one key a line instead of as {…}`;
    found = { depth, column: keyColumn + 2, place };
    break;
  }
  return found;
}

/** The line (from 1) of the last character that is not white space in text[start, end). */
function lastLineOf(text: string, lines: LineCounter, start: number, end: number): number {
  let last = end;
  while (last > start && /\s/.test(text[last - 1] as string)) last--;
  return lines.linePos(Math.max(start, last - 1)).line;
}
