import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { httpUrlProblem } from "../../../src/config/sections/mcp.js";
import { withoutUrlCredentials } from "../../../src/config/urlCredentials.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home.cleanup());

function problems(yaml: string): string {
  home = tempHome();
  home.write("config.yaml", yaml);
  try {
    loadConfig({ home: home.dir, env: {} });
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error("the config loaded");
}

it("a wrong env or headers value under a credential name is described by its kind, never quoted", () => {
  const message = problems(
    [
      "mcp_servers:",
      "  x:",
      "    url: https://mcp.example.com/",
      "    headers: { Authorization: [Bearer, sk-live-4242], X-Api-Key: { k: ak-7777 }, X-Team: [a, b] }",
      "    env: { DB_PASSWORD: [pw-9911] }",
      "",
    ].join("\n"),
  );
  expect(message).toContain(
    "mcp_servers.x.headers.Authorization: expected a string, got a list (not shown: the key holds a secret)",
  );
  expect(message).toContain(
    "mcp_servers.x.headers.X-Api-Key: expected a string, got a mapping (not shown: the key holds a secret)",
  );
  expect(message).toContain(
    "mcp_servers.x.env.DB_PASSWORD: expected a string, got a list (not shown: the key holds a secret)",
  );
  // A name that is not a credential keeps its value in the message.
  expect(message).toContain('mcp_servers.x.headers.X-Team: expected a string, got ["a","b"]');
  for (const secret of ["sk-live-4242", "ak-7777", "pw-9911"]) expect(message).not.toContain(secret);
});

it("a url refused at load is quoted without its user:password@ password or credential query values", () => {
  const message = problems('mcp_servers:\n  x:\n    url: "ftp://me:pw-5150@h/?api_key=ak-3131&t=1"\n');
  expect(message).toContain(
    'mcp_servers.x.url: expected an http:// or https:// URL, got "ftp://me:[redacted]@h/?api_key=[redacted]&t=1" (ftp is not supported)',
  );
  const broken = problems('mcp_servers:\n  y:\n    url: "http://me:pw-5151@"\n');
  expect(broken).toContain(
    'mcp_servers.y.url: expected an http:// or https:// URL, got "http://me:[redacted]@"',
  );
  // Written without http://, a user:password@ reads as a scheme ("me:") and a path: still not quoted.
  const noScheme = problems('mcp_servers:\n  z:\n    url: "me:pw-5152@localhost:8080/mcp"\n');
  expect(noScheme).toContain(
    'mcp_servers.z.url: expected an http:// or https:// URL, got "me:[redacted]@localhost:8080/mcp" (me is not supported)',
  );
  for (const secret of ["pw-5150", "ak-3131", "pw-5151", "pw-5152"])
    expect(message + broken + noScheme).not.toContain(secret);
});

it("a password holding a / (a base64 token) is not quoted either, in a url refused at load or by svc mcp add", () => {
  const noScheme = problems('mcp_servers:\n  z:\n    url: "me:s3cr/t-6161@localhost:8080/mcp"\n');
  expect(noScheme).toContain(
    'mcp_servers.z.url: expected an http:// or https:// URL, got "me:[redacted]@localhost:8080/mcp" (me is not supported)',
  );
  expect(noScheme).not.toContain("s3cr");
  expect(withoutUrlCredentials("ws://me:s3cr/t?x#y@localhost:8080/mcp")).toBe(
    "ws://me:[redacted]@localhost:8080/mcp",
  );
  // A port, and an @ further on in a path or query, are no user:password@.
  for (const url of [
    "https://mcp.example.com:8443/users/@me",
    "http://h:80?email=me@example.com",
    "http://h/a:b@c",
  ])
    expect(withoutUrlCredentials(url)).toBe(url);
});

describe("a url written without its scheme", () => {
  it("says so and how to write it; from a variable, without quoting what it rendered", () => {
    expect(httpUrlProblem("127.0.0.1:8080/mcp")).toBe(
      'expected an http:// or https:// URL, got "127.0.0.1:8080/mcp" (no http:// or https:// at its start) — write http://127.0.0.1:8080/mcp (https:// for TLS)',
    );
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
    expect(httpUrlProblem("internal.corp:9000/mcp", "${MCP_HOST}/mcp")).toBe(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      'expected an http:// or https:// URL, got "${MCP_HOST}/mcp" (no http:// or https:// at its start) — start it with http:// or https://',
    );
    expect(httpUrlProblem("[::1]:8080/mcp")).toBe(
      'expected an http:// or https:// URL, got "[::1]:8080/mcp" (no http:// or https:// at its start) — write http://[::1]:8080/mcp (https:// for TLS)',
    );
    expect(httpUrlProblem("http://localhost:8080/mcp")).toBeUndefined();
  });
});

describe("a url naming port 0", () => {
  it("is refused at load and once rendered: nothing listens there (0 asks a listener for any free port)", () => {
    expect(problems('mcp_servers:\n  z:\n    url: "http://127.0.0.1:0/mcp"\n')).toContain(
      'mcp_servers.z.url: "http://127.0.0.1:0/mcp" names port 0, which no server listens on — write the port the MCP server listens on',
    );
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
    expect(httpUrlProblem("https://mcp.test:0/mcp", "https://mcp.test:${PORT}/mcp")).toBe(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      '"https://mcp.test:${PORT}/mcp" names port 0, which no server listens on — write the port the MCP server listens on',
    );
    expect(httpUrlProblem("http://127.0.0.1:80/mcp")).toBeUndefined();
  });
});

describe("a url that names no host", () => {
  it("http:///mcp is refused at load (it would parse with the path's first segment, mcp, as its host)", () => {
    expect(problems('mcp_servers:\n  e:\n    url: "http:///mcp"\n')).toContain(
      'mcp_servers.e.url: "http:///mcp" names no host (three slashes after http:) — write the server\'s host: http://<host>/mcp',
    );
    expect(httpUrlProblem("https:///x")).toBe(
      '"https:///x" names no host (three slashes after https:) — write the server\'s host: https://<host>/mcp',
    );
    expect(httpUrlProblem("https://host/x")).toBeUndefined();
  });
});
