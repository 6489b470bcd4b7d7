import { describe, expect, it } from "vitest";
import { serverScoped } from "../../../src/actors/mcp/runtime.js";

/** The CLI and the gateway log name the server once: `mcp_servers.<name>: <reason>`. */
describe("serverScoped", () => {
  it("prefixes a bare reason with the server's config key", () => {
    expect(serverScoped("files", "connect timed out after 60 s")).toBe(
      "mcp_servers.files: connect timed out after 60 s",
    );
  });

  it("keeps a reason that already names mcp_servers.<name>", () => {
    expect(serverScoped("files", "mcp_servers.files.url: expected an http:// or https:// URL")).toBe(
      "mcp_servers.files.url: expected an http:// or https:// URL",
    );
  });

  it("does not name the server twice when an OAuth error starts with `<server>: `", () => {
    expect(serverScoped("o", "o: OAuth discovery failed — GET http://127.0.0.1:9/.well-known/x → 404")).toBe(
      "mcp_servers.o: OAuth discovery failed — GET http://127.0.0.1:9/.well-known/x → 404",
    );
  });
});
