import { describe, expect, it } from "vitest";
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
