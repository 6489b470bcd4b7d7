// Puts this project's own `svc` command into node_modules/.bin after the build, so that `npx svc ...` in a
// checkout runs the code just built here (npm links the bins of dependencies, never the project's own,
// and npx would otherwise install a copy of the project into its cache).
import { chmodSync, mkdirSync, rmSync, symlinkSync } from "node:fs";

const entry = "dist/cli/main.js";
chmodSync(entry, 0o755);
mkdirSync("node_modules/.bin", { recursive: true });
rmSync("node_modules/.bin/svc", { force: true });
symlinkSync(`../../${entry}`, "node_modules/.bin/svc");
