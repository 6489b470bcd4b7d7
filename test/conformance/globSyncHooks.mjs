// Module hooks registered by globSyncPreload.mjs (they run on the loader thread).
const SHIM = new URL("./fsWithGlobSync.mjs", import.meta.url).href;

export async function resolve(specifier, context, next) {
  const fromSuite = context.parentURL?.includes("/@modelcontextprotocol/conformance/") === true;
  if (fromSuite && (specifier === "fs" || specifier === "node:fs")) return { url: SHIM, shortCircuit: true };
  return next(specifier, context);
}
