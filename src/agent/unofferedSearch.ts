import type { UnofferedTools } from "./unofferedTools.js";

/**
 * Why a call names `web_search` when the run's built-in toolsets select it (`web_search`, `web`, the default
 * set) but `tools.web_search` names no search backend, so it was not offered: the command agent sees the name
 * in SVC_TOOLSETS, and "unknown tool" would not say what is missing. Undefined for any other name, and for a
 * run whose toolsets do not select it (an unknown tool as any other).
 */
export function unofferedSearch(builtinToolsets: readonly string[], hasBackend: boolean): UnofferedTools {
  if (hasBackend || !builtinToolsets.some((name) => name === "web_search" || name === "web"))
    return () => undefined;
  return (name) =>
    name === "web_search"
      ? 'this run is not offered web_search: tools.web_search names no search backend — the gateway\'s config.yaml needs tools.web_search (backend: searxng, brave or tavily) to offer it; "web_search" was not run'
      : undefined;
}
