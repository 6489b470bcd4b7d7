import { readFileSync, statSync } from "node:fs";
import { extname } from "node:path";
import type { FilterDeps } from "../streams/filters.js";
import { parseJson } from "../streams/jsonNumbers/index.js";
import { foundText, isPlainRecord, isUnsafeInteger, valueToText } from "../streams/payloadPath.js";
import { fileStamp, isRacy } from "./fileStamp.js";
import { resolveProfilePath } from "./profiles.js";
import { notUtf8Text } from "./textEncoding.js";

/**
 * `in_file` lists. Each read costs one stat; the file is parsed again only when its inode, size, mtime or
 * ctime changed, or, while it is younger than RACY_WINDOW_MS, when its bytes changed (a same-size
 * rewrite within one coarse timestamp tick keeps all four). Contents: a JSON array → its items, a JSON object → its keys, anything else → its
 * non-empty trimmed lines (every one: `#general` is an entry, not a comment). Items that are not
 * strings use the same text as filters compare (`42`, `true`, compact JSON).
 */
export interface ListReaderOptions {
  /** The profile root: relative list paths and `~/.svc/...` resolve here (default: the working directory). */
  baseDir?: string;
  /** A list file cannot be used (missing, not a file, not UTF-8 text, a `.json` file that is not a JSON array or object); once until it can. */
  onUnreadable?: (file: string, problem: string) => void;
}

interface CachedList {
  /** Its `fileStamp` when read. */
  stamp: string;
  /** The file was young when read: its metadata alone cannot prove it unchanged. */
  racy: boolean;
  text: string;
  entries: ReadonlySet<string>;
}

/**
 * A JSON list item as filters compare it: a number both as written (`1.0`, a 64-bit id's exact digits)
 * and as its value's text (`1`), so a payload's `1` and `1.0` both match either spelling.
 */
function itemTexts(list: unknown[], index: number, item: unknown): string[] {
  const written = foundText({ value: item, holder: list, key: String(index) });
  // An integer past 2^53 is only its digits: its value's text is shared with its float neighbours.
  if (written === valueToText(item) || isUnsafeInteger(item)) return [written];
  return [written, valueToText(item)];
}

/**
 * A `.json` file must be a JSON array or object: one with a syntax error (a trailing comma) throws, so a
 * blocklist under `not` fails closed instead of becoming a one-line text list that blocks nothing. Other
 * files are JSON when they parse as an array or object, else lines (`[bot] one` is a line).
 */
export function parseList(text: string, file = ""): ReadonlySet<string> {
  const trimmed = text.trim();
  const isJsonFile = extname(file).toLowerCase() === ".json";
  if (isJsonFile || trimmed.startsWith("[") || trimmed.startsWith("{")) {
    let parsed: unknown;
    try {
      parsed = parseJson(trimmed);
    } catch (err) {
      if (isJsonFile) throw new Error(`not valid JSON: ${(err as Error).message}`);
    }
    if (Array.isArray(parsed)) return new Set(parsed.flatMap((item, i) => itemTexts(parsed, i, item)));
    if (isPlainRecord(parsed)) return new Set(Object.keys(parsed));
    if (isJsonFile) throw new Error("a .json list must be a JSON array or object");
  }
  const lines = text.split(/\r?\n|\r/).map((line) => line.trim());
  return new Set(lines.filter((line) => line.length > 0));
}

/**
 * A list file's text. One saved as UTF-16 or in another encoding than UTF-8 cannot be used (it throws): read
 * anyway its lines would be other text than written (`caf\uFFFD`, or NULs between the letters), so an allow
 * list would ignore events and a blocklist under `not` let them through, without a word.
 */
function readListText(file: string): string {
  const bytes = readFileSync(file);
  const problem = notUtf8Text(bytes);
  if (problem !== undefined) throw new Error(problem);
  return bytes.toString("utf8");
}

/**
 * Why the `in_file` list `path` (relative to `baseDir`) cannot be used now, as a filter would find it, or
 * undefined when it can; `file` is the path it resolves to.
 */
export function listFileProblem(path: string, baseDir: string): { file: string; problem?: string } {
  const file = resolveProfilePath(path, baseDir);
  try {
    if (!statSync(file).isFile()) return { file, problem: "not a regular file" };
    parseList(readListText(file), file);
    return { file };
  } catch (err) {
    return { file, problem: (err as Error).message };
  }
}

export function createListReader(options: ListReaderOptions = {}): FilterDeps {
  const baseDir = options.baseDir ?? process.cwd();
  const cache = new Map<string, CachedList>();
  const reported = new Set<string>();

  const read = (file: string): ReadonlySet<string> => {
    const stats = statSync(file);
    if (!stats.isFile()) throw new Error("not a regular file");
    const stamp = fileStamp(stats);
    const cached = cache.get(file);
    if (cached !== undefined && cached.stamp === stamp && !cached.racy) return cached.entries;
    const text = readListText(file);
    const racy = isRacy(stats);
    const entries = cached !== undefined && cached.text === text ? cached.entries : parseList(text, file);
    cache.set(file, { stamp, racy, text, entries });
    return entries;
  };

  return {
    readList(path) {
      const file = resolveProfilePath(path, baseDir);
      try {
        const entries = read(file);
        reported.delete(file);
        return entries;
      } catch (err) {
        cache.delete(file);
        if (!reported.has(file)) {
          reported.add(file);
          options.onUnreadable?.(file, (err as Error).message);
        }
        throw err;
      }
    },
  };
}
