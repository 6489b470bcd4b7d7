import { describe, expect, it } from "vitest";
import type { McpServerEntry } from "../../../src/config/sections/mcp.js";
import { entrySecrets } from "../../../src/io/mcp/entrySecrets.js";

const entry = (fields: Record<string, unknown>) => fields as unknown as McpServerEntry;

describe("entrySecrets: the credentials a rendered MCP entry carries", () => {
  it("header tokens, credential-named env and query values, the url password, OAuth and key passwords", () => {
    expect(
      entrySecrets(
        entry({
          url: "https://bob:pa%24%24word@mcp.example/mcp?api_key=k-123456&format=json",
          headers: { Authorization: "Bearer tok-abcdef", "X-Api-Key": "raw-key-value" },
          oauth: { client_secret: "cs-987654" },
          client_cert: ["/c.pem", "/k.pem", "keypass-1"],
        }),
      ),
    ).toEqual(["tok-abcdef", "raw-key-value", "pa$$word", "k-123456", "cs-987654", "keypass-1"]);
  });

  it("env: only credential-named values (API_KEY, GITHUB_TOKEN, DB_PASSWORD), not NODE_ENV or a path", () => {
    expect(
      entrySecrets(
        entry({
          command: "node",
          env: { API_KEY: "a1", GITHUB_TOKEN: "g2", DB_PASSWORD: "p3", NODE_ENV: "production", ROOT: "/srv" },
        }),
      ),
    ).toEqual(["a1", "g2", "p3"]);
  });
});
