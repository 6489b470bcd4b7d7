import type { z } from "zod";

type Schema = z.core.$ZodType;

/** The schema that validates the value: through optional/default wrappers, transforms and preprocess steps. */
function unwrap(schema: Schema): Schema {
  let current = schema;
  for (let depth = 0; depth < 32; depth++) {
    const def = current._zod.def as unknown as Record<string, unknown> & { type: string };
    if ("innerType" in def && def.innerType !== undefined) current = def.innerType as Schema;
    else if (def.type === "pipe") {
      const input = def.in as Schema;
      current = input._zod.def.type === "transform" ? (def.out as Schema) : input;
    } else if (def.type === "lazy") current = (def.getter as () => Schema)();
    else return current;
  }
  return current;
}

/** The keys a mapping at `path` (as a zod issue gives it) may have, or none when it is not a fixed mapping. */
export function knownKeysAt(schema: Schema, path: readonly PropertyKey[]): string[] {
  let current = unwrap(schema);
  for (const segment of path) {
    const def = current._zod.def as unknown as Record<string, unknown> & { type: string };
    let next: Schema | undefined;
    if (def.type === "object") next = (def.shape as Record<string, Schema>)[String(segment)];
    else if (def.type === "record") next = def.valueType as Schema;
    else if (def.type === "array") next = def.element as Schema;
    if (next === undefined) return [];
    current = unwrap(next);
  }
  const def = current._zod.def as unknown as { type: string; shape?: Record<string, unknown> };
  return def.type === "object" && def.shape !== undefined ? Object.keys(def.shape) : [];
}
