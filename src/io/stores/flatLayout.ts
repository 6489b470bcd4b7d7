/**
 * The records of a store file keyed by name (`{"<name>": record}`), or why the file is in a layout of
 * another version of svc. Pure: the caller has parsed the JSON object.
 *
 * The one other layout svc wrote is `{"revision": N, "<legacyField>": {...}}` (earlier versions), read as
 * its records. Read as names instead, any other wrapper would make its keys records (a `subscriptions`
 * key served as a route) and drop the real records as that record's unknown fields, so it is refused as a
 * whole: a top-level `version` number (no record is a number) or that wrapper with more keys beside it.
 */
export type FlatLayout = { readonly records: Record<string, unknown> } | { readonly problem: string };

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

export function flatLayout(
  doc: Record<string, unknown>,
  keyedBy: string,
  legacyField: string | undefined,
): FlatLayout {
  const readable = `this one reads the records keyed by ${keyedBy}, {"<${keyedBy}>": {...}}`;
  const fix = `run the version of svc that wrote it, or write its records keyed by ${keyedBy}`;
  if (typeof doc.version === "number") {
    return {
      problem: `format version ${doc.version}, written by a newer version of svc (${readable}, without a version field) — ${fix}`,
    };
  }
  if (legacyField === undefined || typeof doc.revision !== "number" || !isObject(doc[legacyField]))
    return { records: doc };
  const others = Object.keys(doc).filter((key) => key !== "revision" && key !== legacyField);
  if (others.length === 0) return { records: doc[legacyField] as Record<string, unknown> };
  const named = others.map((key) => JSON.stringify(key)).join(", ");
  return {
    problem: `${named} beside "revision" and "${legacyField}" is no layout this version of svc reads (${readable}, or an earlier version's {"revision": N, "${legacyField}": {...}} alone) — ${fix}`,
  };
}
