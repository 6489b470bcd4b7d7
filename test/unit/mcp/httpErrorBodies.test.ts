import { SseError } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { describeTransportError, sseDropCause } from "../../../src/io/mcp/transportErrors.js";
// The transports, loaded at a connect, make their errors known to the modules that read them.
import "../../../src/io/mcp/transport.js";

const page = (title: string) =>
  `<!DOCTYPE html><html><head><title>${title}</title></head><body>${"<p>details</p>\n".repeat(1000)}</body></html>`;

/** `text` cut as svc cuts it at `limit` characters when a space is the last delimiter before. */
const cutBefore = (text: string, limit: number) => {
  const cut = text.lastIndexOf(" ", limit);
  return `${text.slice(0, cut)}… (${text.length - cut} more characters)`;
};

/**
 * The SDK quotes an HTTP error's whole body ("Error POSTing to endpoint: <body>"): a CDN's 502 page or a
 * login page put kilobytes of HTML into the status, every log line of every retry and svc mcp list.
 */
describe("an HTTP error body in a connect or call error", () => {
  it("an HTML page is named by its title and size, with the status", () => {
    const err = new StreamableHTTPError(502, `Error POSTing to endpoint: ${page("502 Bad Gateway")}`);
    expect(describeTransportError(err, [])).toBe(
      'Streamable HTTP error: Error POSTing to endpoint: an HTML page "502 Bad Gateway" (15084 characters, not shown) (HTTP 502)',
    );
    const login = new StreamableHTTPError(403, `Error POSTing to endpoint: ${page("Sign in")}`);
    expect(describeTransportError(login, [])).toMatch(
      /: an HTML page "Sign in" \(\d+ characters, not shown\) \(HTTP 403\)$/,
    );
  });

  it("another long body is one line, cut at 300 characters; a short one is kept whole", () => {
    const long = new StreamableHTTPError(500, `Error POSTing to endpoint: ${"trace line\n".repeat(100)}`);
    const text = describeTransportError(long, []);
    expect(text).toMatch(
      /^Streamable HTTP error: Error POSTing to endpoint: trace line trace line .*… \(\d+ more characters\) \(HTTP 500\)$/,
    );
    expect(text.length).toBeLessThan(400);
    const short = new StreamableHTTPError(500, 'Error POSTing to endpoint: {"error":"boom"}');
    expect(describeTransportError(short, [])).toBe(
      'Streamable HTTP error: Error POSTing to endpoint: {"error":"boom"} (HTTP 500)',
    );
  });

  it("the cut never splits a word: before a delimiter, or nothing", () => {
    const token = `sk-${"a".repeat(40)}`;
    const body = `${"x ".repeat(140)}bad key ${token} and more ${"y ".repeat(50)}`;
    const text = describeTransportError(
      new StreamableHTTPError(401, `Error POSTing to endpoint: ${body}`),
      [],
    );
    expect(text).not.toMatch(/sk-a+…/);
    expect(text).toMatch(/(bad key |bad key sk-a{40} )?… \(\d+ more characters\)/);
    const blob = describeTransportError(
      new StreamableHTTPError(500, `Error POSTing to endpoint: ${"Z".repeat(500)}`),
      [],
    );
    expect(blob).toBe(
      "Streamable HTTP error: Error POSTing to endpoint: (500 characters, not shown) (HTTP 500)",
    );
  });

  it("a credential holding a delimiter where the body is cut is redacted before the cut, not shown in part", () => {
    const secret = "pw12345678:SECRETtail99";
    // The body's character 300 is inside the secret, after its colon.
    const body = `${"ab ".repeat(95)}key ${secret} and more text ${"z ".repeat(100)}`;
    const text = describeTransportError(new StreamableHTTPError(401, `Error POSTing to endpoint: ${body}`), [
      secret,
    ]);
    expect(text).toBe(
      `Streamable HTTP error: Error POSTing to endpoint: ${cutBefore(body.replace(secret, "[redacted]").trim(), 300)} (HTTP 401)`,
    );
    expect(text).toContain("key [redacted]… (");
    expect(text).not.toContain("pw12345678");
  });

  it("so is one in a server's error message where it is cut at 2,000 characters, and in an HTML page's title", () => {
    const secret = "pw12345678:SECRETtail99";
    const message = `${"ab ".repeat(654)}key ${secret} and more text ${"x ".repeat(100)}`;
    expect(describeTransportError(new McpError(-32603, message), [secret])).toBe(
      cutBefore(`MCP error -32603: ${message}`.replace(secret, "[redacted]"), 2000),
    );
    // A title is cut at 120 characters.
    const title = `${"ab ".repeat(32)}key ${secret}`;
    const err = new StreamableHTTPError(502, `Error POSTing to endpoint: ${page(title)}`);
    expect(describeTransportError(err, [secret])).toMatch(
      /^Streamable HTTP error: Error POSTing to endpoint: an HTML page "(ab ){32}key \[redacted\]" \(\d+ characters, not shown\) \(HTTP 502\)$/,
    );
  });

  it("digits of the body do not stand for the status", () => {
    const err = new StreamableHTTPError(404, "Error POSTing to endpoint: no route for /v404/mcp");
    expect(describeTransportError(err, [])).toBe(
      "Streamable HTTP error: Error POSTing to endpoint: no route for /v404/mcp (HTTP 404)",
    );
  });
});

/** The EventSource error event an SseError carries (not read by describeTransportError). */
const sseEvent = (message: string) =>
  ({ type: "error", message }) as unknown as ConstructorParameters<typeof SseError>[2];

describe("a fetch that failed, on either transport", () => {
  it("reads alike: the SSE stream's EventSource wrapping (SSE error: TypeError: ...) is left out", () => {
    // What SSEClientTransport.start() rejects with for a refused connection (the event's message flattened).
    const refused = "TypeError: fetch failed: connect ECONNREFUSED 127.0.0.1:9";
    const sse = new SseError(undefined, refused, sseEvent(refused));
    expect(describeTransportError(sse, [])).toBe("fetch failed: connect ECONNREFUSED 127.0.0.1:9");
    // Another SSE error keeps its wording.
    expect(
      describeTransportError(
        new SseError(401, "Non-200 status code (401)", sseEvent("Non-200 status code (401)")),
        [],
      ),
    ).toBe("SSE error: Non-200 status code (401)");
  });
});

/** The EventSource error event the SDK wraps (not read by sseDropCause). */
const dropped = new Event("error") as ConstructorParameters<typeof SseError>[2];

describe("sseDropCause", () => {
  it("leaves out the EventSource's wrapping of a cut stream", () => {
    expect(sseDropCause(new SseError(undefined, "TypeError: terminated: other side closed", dropped))).toBe(
      "terminated: other side closed",
    );
  });
  it('says the server ended a stream it closed cleanly (the SDK\'s "SSE error: undefined")', () => {
    expect(sseDropCause(new SseError(undefined, undefined, dropped))).toBe("the server ended the stream");
  });
});
