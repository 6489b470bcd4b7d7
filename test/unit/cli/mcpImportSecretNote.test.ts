import { describe, expect, it } from "vitest";
import { importedSecretNote } from "../../../src/cli/mcp/edit.js";

const none = { env: [], headers: [], urls: [] };
const config = "/h/config.yaml";

describe("svc mcp import: the note on an entry's credential written out", () => {
  it("names the entry and the keys (never a value) and the variable to write in config.yaml", () => {
    expect(importedSecretNote("gh", none, config)).toEqual([]);
    expect(importedSecretNote("r", { ...none, headers: ["Authorization", "X-Api-Key"] }, config)).toEqual([
      `Note: r: headers.Authorization, headers.X-Api-Key hold credentials that are written to ${config} as given, so the file is now readable by you only (mode 0600); to keep it in .env instead, write it as headers.Authorization: Bearer $\{AUTHORIZATION} and set AUTHORIZATION in .env`,
    ]);
    expect(importedSecretNote("k", { ...none, headers: ["X-Api-Key"] }, config)[0]).toContain(
      `write it as headers.X-Api-Key: $\{X_API_KEY} and set X_API_KEY in .env`,
    );
    expect(importedSecretNote("pg", { ...none, urls: ["args[2] (a URL's password)"] }, config)[0]).toContain(
      `Note: pg: args[2] (a URL's password) holds a credential that is written to ${config} as given`,
    );
  });
});
