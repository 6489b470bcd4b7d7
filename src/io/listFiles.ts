import { readFileSync, statSync } from "node:fs";
import type { FilterDeps } from "../streams/filters.js";
import { valueToText } from "../streams/payloadPath.js";
import { resolveProfilePath } from "./profiles.js";
import { RACY_WINDOW_MS } from "./stores/subscriptions.js";

/**
 * `in_file` lists. Each read costs one stat; the file is parsed again only when its inode, size or
 * mtime changed, or, while it is younger than RACY_WINDOW_MS, when its bytes changed (a same-size
 * rewrite within one coarse timestamp tick keeps all three). Contents: a JSON array → its items, a JSON object → its keys, anything else → its
 * non-empty trimmed lines, except comment lines (first non-blank character `#`). Items that are not
 * strings use the same text as filters compare (`42`, `true`, compact JSON).
 */
export interface ListReaderOptions {
  /** The profile root: relative list paths and `~/.svc/...` resolve here (default: the working directory). */
  baseDir?: string;
}

interface CachedList {
  /** `<inode>:<size>:<mtimeMs>` when read. */
  stamp: string;
  /** The file was young when read: its metadata alone cannot prove it unchanged. */
  racy: boolean;
  text: string;
  entries: ReadonlySet<string>;
}

export function parseList(text: string): ReadonlySet<string> {
  const trimmed = text.trim();
  if (trimmed.startsWith("[") || trimmed.startsWith("{")) {
    try {
      const parsed: unknown = JSON.parse(trimmed);
      if (Array.isArray(parsed)) return new Set(parsed.map(valueToText));
      if (typeof parsed === "object" && parsed !== null) return new Set(Object.keys(parsed));
    } catch {
      // Not JSON after all (a line list whose first line starts with a bracket): fall through.
    }
  }
  // `#` lines are comments, as in hosts or .gitignore files; a value starting with `#` needs a JSON list.
  const lines = text.split(/\r?\n|\r/).map((line) => line.trim());
  return new Set(lines.filter((line) => line.length > 0 && !line.startsWith("#")));
}

export function createListReader(options: ListReaderOptions = {}): FilterDeps {
  const baseDir = options.baseDir ?? process.cwd();
  const cache = new Map<string, CachedList>();

  return {
    readList(path) {
      const file = resolveProfilePath(path, baseDir);
      let stats: { ino: number; mtimeMs: number; size: number; isFile(): boolean };
      try {
        stats = statSync(file);
      } catch (err) {
        cache.delete(file);
        throw err;
      }
      if (!stats.isFile()) {
        cache.delete(file);
        throw new Error(`in_file list ${file} is not a regular file`);
      }
      const stamp = `${stats.ino}:${stats.size}:${stats.mtimeMs}`;
      const cached = cache.get(file);
      if (cached !== undefined && cached.stamp === stamp && !cached.racy) return cached.entries;
      const text = readFileSync(file, "utf8");
      const racy = Date.now() - stats.mtimeMs < RACY_WINDOW_MS;
      const entries = cached !== undefined && cached.text === text ? cached.entries : parseList(text);
      cache.set(file, { stamp, racy, text, entries });
      return entries;
    },
  };
}
