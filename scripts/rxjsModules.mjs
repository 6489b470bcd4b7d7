// An esbuild plugin for svc's bundles: rxjs is bundled from its ES-module build. Its package exports the
// CommonJS build first under the `node` condition, which no bundler can tree-shake, so every command
// parsed and compiled all of rxjs (~340 KB) at each start for the dozen operators svc uses.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

const rxjsRoot = dirname(createRequire(import.meta.url).resolve("rxjs/package.json"));

export const rxjsModules = {
  name: "rxjs-modules",
  setup(build) {
    build.onResolve({ filter: /^rxjs$/ }, () => ({ path: join(rxjsRoot, "dist/esm/index.js") }));
  },
};
