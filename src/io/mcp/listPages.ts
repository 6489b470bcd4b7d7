import { z } from "zod";

/**
 * What reading a paged MCP list takes (a session's tools/list, the utility tools' resources and prompts),
 * apart from the session: the utility tools use it without loading the MCP SDK's client, which a gateway
 * loads only when it connects a server (io/mcp/connect.ts).
 */

/**
 * A list's `nextCursor`: hand-written servers end the list with `null` or "" as well as by leaving it out,
 * and some write a page number as a number (`2`), which is asked for as its text (`"2"`): MCP's cursor is
 * an opaque string, so the server's answer to that page says whether it takes it.
 */
export const LooseCursorSchema = z.union([z.string(), z.number().transform(String)]).nullish();

/** A value with each key sent as `null` left out, at any depth: MCP has no field whose value may be null. */
export function nullsLeftOut(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(nullsLeftOut);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== null)
      .map(([key, v]) => [key, nullsLeftOut(v)]),
  );
}

/** Pages fetched at most per list: a server that keeps answering a new cursor cannot loop us forever. */
export const MAX_LIST_PAGES = 100;

/** The cursor to ask for next, or undefined when the list is complete (absent, empty or already asked). */
export function nextPage(cursor: string | null | undefined, seen: Set<string>): string | undefined {
  if (cursor === undefined || cursor === null || cursor === "" || seen.has(cursor)) return undefined;
  seen.add(cursor);
  return cursor;
}
