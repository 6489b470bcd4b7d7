import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { execa } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { CLI_NODE_ARGS, svcModule } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

const EDIT = pathToFileURL(svcModule("io/yamlEdit.js")).href;

let home: TempHome;
afterEach(() => home?.cleanup());

/** A writer process that sets `count` keys of its own, one edit (one read-modify-write) each. */
function writer(dir: string, tag: string, count: number) {
  const script = `
    import { setEnvValues, setYamlValues } from ${JSON.stringify(EDIT)};
    for (let i = 0; i < ${count}; i++) {
      setEnvValues(${JSON.stringify(join(dir, ".env"))}, { ["${tag}_" + i]: String(i) });
      setYamlValues(${JSON.stringify(join(dir, "config.yaml"))}, [[["keys", "${tag}_" + i], i]]);
    }`;
  return execa(process.execPath, [...CLI_NODE_ARGS, "--input-type=module", "-e", script], {
    cwd: resolve(import.meta.dirname, "../../.."),
  });
}

describe("config.yaml and .env edits from two processes at once", () => {
  it("keep every key both writers set (no lost update)", async () => {
    home = tempHome();
    home.write("config.yaml", "# user comment\nkeys: {}\n");
    await Promise.all([writer(home.dir, "a", 40), writer(home.dir, "b", 40)]);
    const env = readFileSync(join(home.dir, ".env"), "utf8");
    const yaml = readFileSync(join(home.dir, "config.yaml"), "utf8");
    for (const tag of ["a", "b"]) {
      for (let i = 0; i < 40; i++) {
        expect(env).toContain(`${tag}_${i}=${i}\n`);
        expect((parse(yaml) as { keys: Record<string, number> }).keys[`${tag}_${i}`]).toBe(i);
      }
    }
    expect(yaml.startsWith("# user comment")).toBe(true);
  }, 60_000);
});
