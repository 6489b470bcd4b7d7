/**
 * `import()` of a package svc's bundle leaves outside (uWS, undici, ioredis, open, the inspector). The built
 * program is a CommonJS script run from V8's code cache (src/io/compileCache.ts), where Node 20 lets
 * `import()` work only through an experimental hook that prints a warning; the module that loads it, an ES
 * module, lends its own `import()` instead. Elsewhere (svc's modules on their own, tests) it is `import()`.
 */
const SLOT = Symbol.for("svc.importExternal");

type Importer = (specifier: string) => Promise<unknown>;

/** Called before the program is loaded from its cache; `importer` is `(s) => import(s)` written in an ES module. */
export function lendImport(importer: Importer): void {
  (globalThis as { [SLOT]?: Importer })[SLOT] = importer;
}

export function importExternal<Module>(specifier: string): Promise<Module> {
  const lent = (globalThis as { [SLOT]?: Importer })[SLOT];
  return (lent === undefined ? import(specifier) : lent(specifier)) as Promise<Module>;
}
