// An esbuild plugin for svc's bundles: zod's `locales` namespace (error messages in ~60 languages, about
// 450 KB) is replaced by its English entry alone. `import { z } from "zod"` reaches every locale through
// `z.locales`, so no bundler can drop them; svc and the MCP SDK only ever use zod's default, English
// (registered by zod's schemas from `locales/en.js` directly). Every command parsed and compiled the rest
// at each start.
import { dirname } from "node:path";

export const zodEnglishOnly = {
  name: "zod-english-only",
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]node_modules[\\/]zod[\\/]/.test(args.importer)
        ? { path: `${dirname(dirname(args.importer))}/locales/index.js`, namespace: "zod-english-only" }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: "zod-english-only" }, (args) => ({
      contents: 'export { default as en } from "./en.js";\n',
      resolveDir: dirname(args.path),
    }));
  },
};
