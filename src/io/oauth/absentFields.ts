/**
 * A metadata document's fields written `null` or `""` as the absent fields they stand for. RFC 8414 and
 * RFC 9728 leave out a field without a value, but servers that serialize every field of their model (Go
 * structs without `omitempty`, pydantic without `exclude_none`) write `"jwks_uri": ""` or
 * `"scopes_supported": null`, which a schema refuses as no URL or no list. Anything but a JSON object is
 * returned as it is, for the schema to name.
 */
export function withoutAbsentFields(document: unknown): unknown {
  if (document === null || typeof document !== "object" || Array.isArray(document)) return document;
  const fields = Object.entries(document);
  if (!fields.some(([, value]) => value === null || value === "")) return document;
  return Object.fromEntries(fields.filter(([, value]) => value !== null && value !== ""));
}

/** `res` with its JSON document's absent fields left out; the response as it is otherwise. */
export async function responseWithoutAbsentFields(res: Response): Promise<Response> {
  if (!res.ok) return res;
  let document: unknown;
  try {
    document = await res.clone().json();
  } catch {
    return res;
  }
  const kept = withoutAbsentFields(document);
  if (kept === document) return res;
  await res.body?.cancel().catch(() => undefined);
  const headers = new Headers(res.headers);
  headers.delete("content-length");
  headers.delete("content-encoding");
  return new Response(JSON.stringify(kept), { status: res.status, statusText: res.statusText, headers });
}
