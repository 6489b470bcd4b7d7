import { describe, expect, it } from "vitest";
import { WrittenAs } from "../../../src/config/describe.js";
import { notFoundHint } from "../../../src/io/mcp/connect.js";

/** `command not found: <command> — <hint>`: a command holding a `${...}` nothing rendered says what to set. */
describe("notFoundHint for a command kept as written", () => {
  it("an unset variable: add it to the profile's .env", () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
    expect(notFoundHint("${SERVER_BIN}")).toBe(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      "${SERVER_BIN} is not set, so command was run as written — add SERVER_BIN=... to the profile's .env or the environment",
    );
  });

  it("another client's variable (VS Code's input:bin form, which no .env line can set) gets the fix, not 'add input:bin=...'", () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
    expect(notFoundHint("${input:bin}")).toBe(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      "${input:bin} is not set, so command was run as written — write ${NAME} in place of ${input:bin} (a variable of another client, which svc does not render and no .env line can set) and add NAME=... to the profile's .env or the environment",
    );
  });

  it("a whole command line: the split to write, each entry as YAML reads it back (@scope/server quoted)", () => {
    expect(notFoundHint(`${process.execPath} -y @scope/server --port 8080`)).toBe(
      `command is the program alone: write command: ${process.execPath} and args: [-y, "@scope/server", --port, 8080]`,
    );
  });

  it("a relative path names the working directory it was taken from (not PATH) and asks for an absolute one", () => {
    expect(notFoundHint("./bin/server.sh", "/srv/app")).toBe(
      "a relative command is taken from the working directory (/srv/app), where there is no such file — write its absolute path (or ~/...)",
    );
    expect(notFoundHint("my-server", "/srv/app")).toBe("check command (and PATH)");
    expect(notFoundHint("/opt/missing/server", "/srv/app")).toBe("check command (and PATH)");
  });
});

/** A command a `${VAR}` gave: no fix that writes part of its value back (svc names it as the file writes it). */
describe("notFoundHint for a command a variable gave", () => {
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
  const given = { command: new WrittenAs("${SERVER_LINE}") };

  it("neither splits a whole command line nor names a shell assignment's variable", () => {
    expect(notFoundHint(`${process.execPath} -y @scope/server`, "/srv/app", undefined, given)).toBe(
      "check command (and PATH)",
    );
    expect(notFoundHint("GITHUB_TOKEN=abc npx", "/srv/app", undefined, given)).toBe(
      "check command (and PATH)",
    );
  });

  it("names an unset variable of the file's text only", () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
    const partly = { command: new WrittenAs("/opt/${DIR}/${BIN}") };
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
    expect(notFoundHint("/opt/x-${HIDDEN}/${BIN}", "/srv/app", undefined, partly)).toBe(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      "${BIN} is not set, so command was run as written — add BIN=... to the profile's .env or the environment",
    );
  });
});
