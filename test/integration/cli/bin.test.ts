import { readFileSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { describe, expect, it } from "vitest";

const pkg = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
  version: string;
  bin: { svc: string };
};
const bin = fileURLToPath(new URL(`../../../${pkg.bin.svc}`, import.meta.url));

// `npm test` builds before it runs the suite; npx runs this file by path, so it must be executable
// even when npx's own link to the checkout already exists and does not chmod it again.
describe("the built svc bin", () => {
  it("is executable and runs as a command", async () => {
    expect(statSync(bin).mode & 0o111).not.toBe(0);
    const run = await execa(bin, ["--version"]);
    expect(run.stdout.trim()).toBe(pkg.version);
  });
});
