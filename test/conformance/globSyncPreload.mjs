// Preload (`node --import`) for the MCP conformance suite, which imports `globSync` from "fs": Node 20
// has no fs.globSync. Imports of "fs"/"node:fs" from inside the suite's package are redirected to a
// module that re-exports node:fs and adds globSync from the `glob` package.
import { register } from "node:module";

register("./globSyncHooks.mjs", import.meta.url);
