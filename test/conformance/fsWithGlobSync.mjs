// node:fs with globSync (Node 22 has it built in), for the conformance suite on Node 20.
import fs from "node:fs";
import { globSync as fromGlob } from "glob";

export * from "node:fs";
export const globSync = fs.globSync ?? ((pattern, options) => fromGlob(pattern, options));
export default { ...fs, globSync };
