import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { isAnswerLost, isSessionExpired } from "../../../src/actors/mcp/callErrors.js";
import { parseToolArgs } from "../../../src/cli/mcp.js";
import { isModernOnlyRejection } from "../../../src/io/mcp/eras.js";
// The transports, loaded at a connect, make their errors known to the modules that read them.
import "../../../src/io/mcp/transport.js";

describe("modern-only rejection of initialize (spec 9)", () => {
  it("counts -32022 and -32601, as JSON-RPC errors or inside an HTTP error body", () => {
    expect(isModernOnlyRejection(new McpError(-32022, "Unsupported protocol version"))).toBe(true);
    expect(isModernOnlyRejection(new McpError(-32601, "Method not found"))).toBe(true);
    expect(
      isModernOnlyRejection(
        new StreamableHTTPError(
          400,
          'Error POSTing to endpoint: {"jsonrpc":"2.0","id":0,"error":{"code":-32022}}',
        ),
      ),
    ).toBe(true);
    expect(isModernOnlyRejection(new Error("this server requires server/discover"))).toBe(true);
  });
  it("does not count timeouts, refusals or auth errors", () => {
    expect(isModernOnlyRejection(new McpError(-32001, "Request timed out"))).toBe(false);
    expect(isModernOnlyRejection(new Error("connect ECONNREFUSED 127.0.0.1:1"))).toBe(false);
    expect(isModernOnlyRejection(new StreamableHTTPError(401, "Unauthorized"))).toBe(false);
  });
  it("does not count an authorization failure or a server's failure whose body names the revision or a code", () => {
    const expired =
      '{"error":"invalid_token","error_description":"The access token expired at 2026-07-28T09:00:00Z"}';
    for (const status of [401, 403])
      expect(
        isModernOnlyRejection(new StreamableHTTPError(status, `Error POSTing to endpoint: ${expired}`)),
      ).toBe(false);
    expect(isModernOnlyRejection(new Error(`Error POSTing to endpoint (HTTP 401): ${expired}`))).toBe(false);
    const notFound = '{"jsonrpc":"2.0","id":0,"error":{"code":-32601,"message":"Method not found"}}';
    expect(
      isModernOnlyRejection(new StreamableHTTPError(500, `Error POSTing to endpoint: ${notFound}`)),
    ).toBe(false);
    expect(isModernOnlyRejection(new Error(`Error POSTing to endpoint (HTTP 502): ${notFound}`))).toBe(false);
  });
  it("reads a 4xx JSON-RPC body's error only: its code or its message, not the rest of the body", () => {
    expect(
      isModernOnlyRejection(
        new Error('Error POSTing to endpoint (HTTP 400): {"jsonrpc":"2.0","id":0,"error":{"code":-32022}}'),
      ),
    ).toBe(true);
    const named = '{"jsonrpc":"2.0","id":0,"error":{"code":-32600,"message":"use server/discover"}}';
    expect(isModernOnlyRejection(new StreamableHTTPError(400, `Error POSTing to endpoint: ${named}`))).toBe(
      true,
    );
    const elsewhere =
      '{"jsonrpc":"2.0","id":0,"error":{"code":-32600,"message":"Invalid request"},"docs":"https://x/stateless"}';
    expect(
      isModernOnlyRejection(new StreamableHTTPError(400, `Error POSTing to endpoint: ${elsewhere}`)),
    ).toBe(false);
    // A body that is no JSON-RPC answer (plain text) is read as the server's words.
    expect(
      isModernOnlyRejection(new StreamableHTTPError(400, "Error POSTing to endpoint: stateless server only")),
    ).toBe(true);
  });
});

describe("session expiry detection", () => {
  it("is a 404 from Streamable HTTP or the SSE message endpoint", () => {
    expect(isSessionExpired(new StreamableHTTPError(404, "Session not found"))).toBe(true);
    expect(isSessionExpired(new Error("Error POSTing to endpoint (HTTP 404): unknown session"))).toBe(true);
    expect(isSessionExpired(new StreamableHTTPError(500, "boom"))).toBe(false);
  });

  it("is also a 400 that names the session (TypeScript SDK example servers), but not any 400", () => {
    const body =
      '{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}';
    expect(isSessionExpired(new StreamableHTTPError(400, `Error POSTing to endpoint: ${body}`))).toBe(true);
    expect(
      isSessionExpired(new Error("Error POSTing to endpoint (HTTP 400): No transport found for sessionId")),
    ).toBe(true);
    expect(isSessionExpired(new StreamableHTTPError(400, "Error POSTing to endpoint: Invalid JSON"))).toBe(
      false,
    );
    expect(isSessionExpired(new Error("Error POSTing to endpoint (HTTP 400): Invalid JSON"))).toBe(false);
  });
});

describe("svc mcp call --args", () => {
  it("takes a JSON object and rejects anything else with a usage error", () => {
    expect(parseToolArgs('{"a":1}')).toEqual({ a: 1 });
    expect(parseToolArgs(undefined)).toEqual({});
    expect(() => parseToolArgs("{a:")).toThrow(/--args: not valid JSON/);
    expect(() => parseToolArgs("[1]")).toThrow(/expected a JSON object/);
    // curl's @file: svc reads no file, and says how to give the file's text instead.
    expect(() => parseToolArgs("@args.json")).toThrow(
      `--args: @args.json is how curl reads a file, which svc does not do: give the JSON itself, e.g. --args "$(cat args.json)"`,
    );
  });

  it("refuses a number a double does not hold with the model run's wording, and passes 1.0 and fractions", () => {
    expect(() => parseToolArgs('{"id": 1234567890123456789}')).toThrow(
      '--args: arguments hold 1234567890123456789, an integer past 2^53 that svc cannot pass exactly; the tool was not run — write it as a string ("1234567890123456789")',
    );
    expect(() => parseToolArgs('{"a": [1e400]}')).toThrow(
      /^--args: arguments hold 1e400, a number that svc cannot pass exactly; the tool was not run/,
    );
    expect(parseToolArgs('{"a": 1.0, "b": 0.10000000000000001, "id": "1234567890123456789"}')).toEqual({
      a: 1,
      b: 0.1,
      id: "1234567890123456789",
    });
  });

  it('refuses an empty --args rather than calling the tool with none (--args "$(cat missing.json)")', () => {
    for (const empty of ["", "  \n"])
      expect(() => parseToolArgs(empty)).toThrow(
        `--args: empty — give a JSON object (--args '{}' calls the tool with no arguments), or leave --args out`,
      );
  });
});

describe("an answer lost after the request went out", () => {
  const failed = (code: string) =>
    new TypeError("fetch failed", { cause: Object.assign(new Error(code), { code }) });
  it("is a reset or closed socket, or a cut-off body; a refused or unresolvable connection is not", () => {
    expect(isAnswerLost(failed("UND_ERR_SOCKET"))).toBe(true);
    expect(isAnswerLost(failed("ECONNRESET"))).toBe(true);
    expect(isAnswerLost(failed("EPIPE"))).toBe(true);
    expect(isAnswerLost(new TypeError("terminated"))).toBe(true);
    expect(isAnswerLost(failed("ECONNREFUSED"))).toBe(false);
    expect(isAnswerLost(failed("ENOTFOUND"))).toBe(false);
  });
});
