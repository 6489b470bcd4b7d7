import { createRequire } from "node:module";

/**
 * A package loaded with `require` when the returned function is first called, not imported: a start that
 * never uses it (no cron expression, no `regex` filter, no email recipient to check) loads none of it.
 */
export function requiredAtFirstUse<Module>(specifier: string): () => Module {
  let loaded: Module | undefined;
  return () => (loaded ??= createRequire(import.meta.url)(specifier) as Module);
}
