import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { readEnvFile } from "../../../src/config/envFile.js";
import { addServers, removeServer } from "../../../src/io/mcpServersEdit.js";
import { existingServerNames } from "../../../src/io/oauth/installWriter.js";
import { setEnvValues, setYamlValues, webhookKeyPath } from "../../../src/io/yamlEdit.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home.cleanup());

describe("comment-preserving edits", () => {
  it("setYamlValues changes only the named keys and keeps comments and order", () => {
    home = tempHome();
    const file = home.write(
      "config.yaml",
      "# top\nagent:\n  provider: echo # why\nplatforms:\n  webhook:\n    extra:\n      port: 1 # old\n",
    );
    const portPath = webhookKeyPath(file, "port");
    expect(portPath).toEqual(["platforms", "webhook", "extra", "port"]);
    setYamlValues(file, [
      [portPath, 9000],
      [webhookKeyPath(file, "enabled"), true],
    ]);
    expect(readFileSync(file, "utf8")).toBe(
      "# top\nagent:\n  provider: echo # why\nplatforms:\n  webhook:\n    extra:\n      port: 9000 # old\n      enabled: true\n",
    );
  });

  it("a file saved with CRLF line ends (and a byte order mark) keeps them through setup's and svc mcp's edits", () => {
    home = tempHome();
    const file = home.write(
      "config.yaml",
      "\uFEFF# top\r\nplatforms:\r\n  webhook:\r\n    enabled: false # off\r\n",
    );
    setYamlValues(file, [[["platforms", "webhook", "enabled"], true]]);
    expect(readFileSync(file, "utf8")).toBe(
      "\uFEFF# top\r\nplatforms:\r\n  webhook:\r\n    enabled: true # off\r\n",
    );
    addServers(file, { fs: { command: "npx", args: ["-y", "pkg"] } }, { doing: "add" });
    expect(readFileSync(file, "utf8")).toBe(
      "\uFEFF# top\r\nplatforms:\r\n  webhook:\r\n    enabled: true # off\r\nmcp_servers:\r\n  fs:\r\n    command: npx\r\n    args:\r\n      - -y\r\n      - pkg\r\n",
    );
    expect(removeServer(file, "fs")).toBe(true);
    expect(readFileSync(file, "utf8")).toBe(
      "\uFEFF# top\r\nplatforms:\r\n  webhook:\r\n    enabled: true # off\r\nmcp_servers: {}\r\n",
    );
    // An LF file stays LF.
    const lf = home.write("lf.yaml", "platforms:\n  webhook:\n    enabled: false\n");
    setYamlValues(lf, [[["platforms", "webhook", "enabled"], true]]);
    expect(readFileSync(lf, "utf8")).toBe("platforms:\n  webhook:\n    enabled: true\n");
  });

  it("setup's and svc mcp's edits change only their own lines of a file in another layout (4-space indents, long lines, aligned comments)", () => {
    home = tempHome();
    const written = [
      "# my gateway",
      "platforms:",
      "    webhook:",
      "        enabled: false      # off while testing",
      "        routes:",
      "            github:",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config file's own interpolation syntax
      "                secret: ${GH_SECRET}    # in .env",
      "                events:",
      "                - pull_request",
      '                prompt: "Review this pull request carefully and summarise the change, its risks, and what the author forgot: {pull_request.title}"',
      "                filters:",
      "                    - { field: action, in: [opened, synchronize] }",
      "",
      "",
      "# the model",
      "agent:",
      "    provider: echo   # for now",
      "",
    ].join("\n");
    const file = home.write("config.yaml", written);
    setYamlValues(file, [
      [["platforms", "webhook", "enabled"], true],
      [["platforms", "webhook", "port"], 9123],
    ]);
    const setUp = written
      .replace("enabled: false      #", "enabled: true      #")
      .replace("in: [opened, synchronize] }\n", "in: [opened, synchronize] }\n        port: 9123\n");
    expect(readFileSync(file, "utf8")).toBe(setUp);
    addServers(file, { fs: { command: "npx", args: ["-y", "pkg"] } }, { doing: "add" });
    const added = `${setUp}mcp_servers:\n  fs:\n    command: npx\n    args:\n      - -y\n      - pkg\n`;
    expect(readFileSync(file, "utf8")).toBe(added);
    addServers(file, { docs: { url: "https://mcp.example.com/mcp" } }, { doing: "add" });
    expect(removeServer(file, "fs")).toBe(true);
    expect(readFileSync(file, "utf8")).toBe(
      `${setUp}mcp_servers:\n  docs:\n    url: https://mcp.example.com/mcp\n`,
    );
  });

  it("svc mcp add/import/remove know a server named by a YAML number or boolean (007:, True:) under the name written", () => {
    home = tempHome();
    const file = home.write(
      "config.yaml",
      "mcp_servers:\n  007: # bond\n    url: https://bond.example/mcp\n  True:\n    url: https://truth.example/mcp\n",
    );
    expect([...existingServerNames(file)]).toEqual(["007", "True"]);
    expect(addServers(file, { "007": { url: "https://evil.example/" } }, { doing: "add" })).toEqual(["007"]);
    // --force replaces the entry in place: one key 007, never a second "007" beside it.
    addServers(file, { "007": { url: "https://new.example/" } }, { doing: "add", replace: true });
    expect(removeServer(file, "True")).toBe(true);
    expect(removeServer(file, "true")).toBe(false);
    expect(readFileSync(file, "utf8")).toBe("mcp_servers:\n  007: # bond\n    url: https://new.example/\n");
  });

  it("setEnvValues writes the lines it replaces or adds with a CRLF .env's line ends", () => {
    home = tempHome();
    const file = home.write(".env", "# secrets\r\nOTHER=kept-value\r\nWEBHOOK_PORT=9000\r\n");
    setEnvValues(file, { WEBHOOK_PORT: "9124", WEBHOOK_ENABLED: "true" });
    expect(readFileSync(file, "utf8")).toBe(
      "# secrets\r\nOTHER=kept-value\r\nWEBHOOK_PORT=9124\r\nWEBHOOK_ENABLED=true\r\n",
    );
  });

  it("a YAML syntax error is named as the gateway names it (line, what to do), not in the parser's words; the file is kept", () => {
    home = tempHome();
    const text =
      'platforms:\n  webhook:\n    enabled: false\n    port: "9000\nmcp_servers:\n  a: {command: x}\n';
    const file = home.write("config.yaml", text);
    const named = `${file}: line 4: not valid YAML — the " that opens a value at line 4, column 11 is never closed (the parser read on to the end of the file) — close it where the value ends`;
    expect(() => setYamlValues(file, [[["platforms", "webhook", "enabled"], true]])).toThrow(
      `${named} — fix it before running setup`,
    );
    expect(() => removeServer(file, "a")).toThrow(`${named} — fix it before running svc mcp remove`);
    expect(() => existingServerNames(file)).toThrow(`${named} — fix it before running svc mcp install`);
    expect(readFileSync(file, "utf8")).toBe(text);
  });

  it("setYamlValues refuses to edit through a YAML alias (it would change the anchored mapping), naming it; the file is kept", () => {
    home = tempHome();
    const text = "shared: &s\n  enabled: false\nplatforms:\n  webhook: *s\n";
    const file = home.write("config.yaml", text);
    expect(() => setYamlValues(file, [[["platforms", "webhook", "enabled"], true]])).toThrow(
      "platforms.webhook: is a YAML alias (*s) — setup edits only a mapping written out there",
    );
    expect(readFileSync(file, "utf8")).toBe(text);
  });

  it("setEnvValues replaces keys in place (also export KEY=), appends new ones, quotes values that need it", () => {
    home = tempHome();
    const file = home.write(".env", "# c\nA=1\nexport B=2\n\nC=3\n");
    setEnvValues(file, { B: "two", D: 'has space "q"' });
    expect(readFileSync(file, "utf8")).toBe("# c\nA=1\nexport B=two\n\nC=3\nD='has space \"q\"'\n");
  });

  it("setEnvValues keeps a line's export (a .env a shell also sources) and the byte order mark before it", () => {
    home = tempHome();
    const file = home.write(".env", '\uFEFFexport WEBHOOK_ENABLED="yes"\r\nWEBHOOK_PORT: 1\r\n');
    setEnvValues(file, { WEBHOOK_ENABLED: "true", WEBHOOK_PORT: "9200" });
    expect(readFileSync(file, "utf8")).toBe("\uFEFFexport WEBHOOK_ENABLED=true\r\nWEBHOOK_PORT=9200\r\n");
    expect(readEnvFile(file)).toEqual({ WEBHOOK_ENABLED: "true", WEBHOOK_PORT: "9200" });
  });

  it("setEnvValues replaces every line that sets a key (dotenv takes the last), also KEY: value", () => {
    home = tempHome();
    // A later line overriding an earlier one, as a .env grown by hand or pasted twice has it.
    const file = home.write(
      ".env",
      "WEBHOOK_PORT=8000\nWEBHOOK_SECRET=old-secret-aaaa\n# prod\nexport WEBHOOK_PORT=8001\nWEBHOOK_SECRET: old-secret-bbbb\nKEEP=1\n",
    );
    setEnvValues(file, { WEBHOOK_PORT: "9123", WEBHOOK_SECRET: "new-secret-cccc" });
    expect(readEnvFile(file)).toEqual({
      WEBHOOK_PORT: "9123",
      WEBHOOK_SECRET: "new-secret-cccc",
      KEEP: "1",
    });
    expect(readFileSync(file, "utf8")).toBe(
      "WEBHOOK_PORT=9123\nWEBHOOK_SECRET=new-secret-cccc\n# prod\nexport WEBHOOK_PORT=9123\nWEBHOOK_SECRET=new-secret-cccc\nKEEP=1\n",
    );
  });

  it("setEnvValues writes every value so that dotenv reads it back unchanged", () => {
    home = tempHome();
    const file = home.write(".env", "");
    const values = {
      A: 'has space "q"',
      B: "it's # not a comment",
      C: 'it\'s "both" \\n',
      D: "back\\slash",
      // .env values may name other variables; a value written by svc never does.
      E: "s3cret-$" + "{NOT_A_REFERENCE}",
      // In backticks (the value has a '), where {A} is not expanded.
      F: "it's $" + '{A} "q"',
    };
    setEnvValues(file, values);
    expect(readEnvFile(file)).toEqual(values);
    // With ', ` and a reference, only double quotes are left, which would expand it: refused.
    expect(() => setEnvValues(file, { G: "it's `$" + "{A}`" })).toThrow(/a \.env file cannot hold it/);
  });
});
