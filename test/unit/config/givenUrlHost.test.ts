import { describe, expect, it } from "vitest";
import { WrittenAs } from "../../../src/config/describe.js";
import { hostAloneAsWritten, withHostAsWritten, withUrlAsWritten } from "../../../src/config/givenUrl.js";

const NOT_SHOWN = "(the value it gives is not shown)";
const v = (name: string) => `$\{${name}}`;

/**
 * docs/delivery-targets.md: a host a `${VAR}` gave is named as config.yaml writes it where the system's messages
 * (and the hints made from them) name it, and only there: a host that is also a word of svc's own message (a
 * docker-compose service `signal`, `mcp`, `smtp`) leaves the platform's prefix and svc's words as they are.
 */
describe(`the host a $\{VAR} gave, named where the system's messages put it`, () => {
  it("signal: the platform's prefix and a quoted answer keep the word; the DNS failure and its hint name the host", () => {
    const written = new WrittenAs(`http://${v("SIGNAL_HOST")}:8080`);
    const host = `<the host of "http://${v("SIGNAL_HOST")}:8080" ${NOT_SHOWN}>`;
    expect(
      withUrlAsWritten(
        "signal: send: connection failed (ENOTFOUND) — the host name signal is not known (DNS): check the host in platforms.signal.base_url",
        "http://signal:8080",
        written,
      ),
    ).toBe(
      `signal: send: connection failed (ENOTFOUND) — the host name ${host} is not known (DNS): check the host in platforms.signal.base_url`,
    );
    expect(
      withUrlAsWritten(
        'signal: send: HTTP 400 — {"error":"Signal refused: signal-cli not registered"}; getaddrinfo ENOTFOUND signal',
        "http://signal:8080",
        written,
      ),
    ).toBe(
      `signal: send: HTTP 400 — {"error":"Signal refused: signal-cli not registered"}; getaddrinfo ENOTFOUND ${host}`,
    );
  });

  it("mcp: an MCP server's words keep their MCP; a refused connection and a URL name the host", () => {
    const written = new WrittenAs(`http://${v("MCP_HOST")}:45999/mcp`);
    const host = `<the host of "http://${v("MCP_HOST")}:45999/mcp" ${NOT_SHOWN}>`;
    expect(
      withUrlAsWritten(
        "the MCP server did not answer: connect ECONNREFUSED mcp:45999 — nothing listens on port 45999 of mcp (at http://mcp:45999/sse)",
        "http://mcp:45999/mcp",
        written,
      ),
    ).toBe(
      `the MCP server did not answer: connect ECONNREFUSED ${host}:45999 — nothing listens on port 45999 of ${host} (at http://${host}:45999/sse)`,
    );
  });

  it("a host written as it is beside a variable's port stays: it is no variable's value", () => {
    const text =
      "fetch failed: connect ECONNREFUSED 127.0.0.1:45999 — nothing listens on port 45999 of localhost";
    expect(
      withUrlAsWritten(
        text,
        "http://localhost:45999/mcp",
        new WrittenAs(`http://localhost:${v("MCP_PORT")}/mcp`),
      ),
    ).toBe(text);
  });

  it("smtp: the SMTP server's words keep their SMTP; the connect's failure and its hint name the host", () => {
    const shown = `"${v("SMTP_HOST")}" ${NOT_SHOWN}`;
    expect(
      withHostAsWritten(
        "email: ESOCKET — the SMTP server could not be reached: getaddrinfo ENOTFOUND smtp — the host name smtp is not known (DNS): check platforms.email.host",
        ["smtp", "smtp"],
        new WrittenAs(v("SMTP_HOST")),
      ),
    ).toBe(
      `email: ESOCKET — the SMTP server could not be reached: getaddrinfo ENOTFOUND ${shown} — the host name ${shown} is not known (DNS): check platforms.email.host`,
    );
  });

  it("a host taken out of the system's words (a hint quotes it) is named as it would be there", () => {
    const written = new WrittenAs(v("SMTP_HOST"));
    const hosts = ["[::1]", "::1"];
    expect(hostAloneAsWritten("::1", hosts, written)).toBe(`"${v("SMTP_HOST")}" ${NOT_SHOWN}`);
    expect(hostAloneAsWritten("[::1]", hosts, written)).toBe(`"${v("SMTP_HOST")}" ${NOT_SHOWN}`);
    expect(hostAloneAsWritten("127.0.0.1", hosts, written)).toBe("127.0.0.1");
    expect(hostAloneAsWritten("", [""], written)).toBe("");
  });

  it("a TLS check's IP: names the host a variable gave as an address", () => {
    const written = new WrittenAs(`https://${v("MCP_HOST")}:18902/mcp`);
    const host = `<the host of "https://${v("MCP_HOST")}:18902/mcp" ${NOT_SHOWN}>`;
    expect(
      withUrlAsWritten(
        "fetch failed: Hostname/IP does not match certificate's altnames: IP: 127.0.0.1 is not in the cert's list: ",
        "https://127.0.0.1:18902/mcp",
        written,
      ),
    ).toBe(
      `fetch failed: Hostname/IP does not match certificate's altnames: IP: ${host} is not in the cert's list: `,
    );
  });

  it("undici's attempted address, and each of its attempted addresses, name the host", () => {
    const written = new WrittenAs(`https://${v("MCP_HOST")}:18903/mcp`);
    const host = `<the host of "https://${v("MCP_HOST")}:18903/mcp" ${NOT_SHOWN}>`;
    const url = "https://10.9.8.7:18903/mcp";
    expect(
      withUrlAsWritten(
        "fetch failed: Connect Timeout Error (attempted address: 10.9.8.7:18903, timeout: 10000ms)",
        url,
        written,
      ),
    ).toBe(`fetch failed: Connect Timeout Error (attempted address: ${host}:18903, timeout: 10000ms)`);
    expect(
      withUrlAsWritten(
        "fetch failed: Connect Timeout Error (attempted addresses: 10.9.8.6:18903, 10.9.8.7:18903, timeout: 10000ms)",
        url,
        written,
      ),
    ).toBe(
      `fetch failed: Connect Timeout Error (attempted addresses: 10.9.8.6:18903, ${host}:18903, timeout: 10000ms)`,
    );
    expect(
      withHostAsWritten(
        "Connect Timeout Error (attempted addresses: smtp:587, 10.0.0.2:587, timeout: 10000ms)",
        ["smtp"],
        new WrittenAs(v("SMTP_HOST")),
      ),
    ).toBe(
      `Connect Timeout Error (attempted addresses: "${v("SMTP_HOST")}" ${NOT_SHOWN}:587, 10.0.0.2:587, timeout: 10000ms)`,
    );
  });

  it("a stalled connect's TLS handshake with and TCP connect to name the host", () => {
    const written = new WrittenAs(`https://${v("MCP_HOST")}:18901/mcp`);
    const host = `<the host of "https://${v("MCP_HOST")}:18901/mcp" ${NOT_SHOWN}>`;
    const url = "https://127.0.0.1:18901/mcp";
    expect(withUrlAsWritten("the TLS handshake with 127.0.0.1:18901 did not complete", url, written)).toBe(
      `the TLS handshake with ${host}:18901 did not complete`,
    );
    expect(withUrlAsWritten("the TCP connect to 127.0.0.1:18901 did not complete", url, written)).toBe(
      `the TCP connect to ${host}:18901 did not complete`,
    );
  });

  it("a DNS server that did not answer: nodemailer's DNS lookup for, and a query's ETIMEOUT, ESERVFAIL, ENODATA, EREFUSED name the host", () => {
    const shown = `"${v("SMTP_HOST")}" ${NOT_SHOWN}`;
    const hosts = ["mail.corp.example", "mail.corp.example"];
    const named = (text: string) => withHostAsWritten(text, hosts, new WrittenAs(v("SMTP_HOST")));
    expect(named("email: EDNS — DNS lookup for mail.corp.example timed out")).toBe(
      `email: EDNS — DNS lookup for ${shown} timed out`,
    );
    for (const code of ["ETIMEOUT", "ESERVFAIL", "ENODATA", "EREFUSED"])
      expect(named(`email: EDNS — queryA ${code} mail.corp.example`)).toBe(
        `email: EDNS — queryA ${code} ${shown}`,
      );
  });
});
