/** The host and port of an `http(s)://` text as written (no user:password@), or undefined without that start. */
function authority(text: string): { host: string; port: string | undefined } | undefined {
  const rest = /^\s*https?:\/\/([^/?#\\]*)/i.exec(text)?.[1];
  if (rest === undefined) return undefined;
  const hostPort = rest.slice(rest.lastIndexOf("@") + 1);
  const bracket = /^(\[[^\]]*\]?)(?::(.*))?$/.exec(hostPort);
  if (bracket !== null) return { host: bracket[1] as string, port: bracket[2] };
  const colon = hostPort.indexOf(":");
  return colon < 0
    ? { host: hostPort, port: undefined }
    : { host: hostPort.slice(0, colon), port: hostPort.slice(colon + 1) };
}

/** The `${NAME}`s written in a text, each once. */
function variablesIn(text: string): string[] {
  const names = [...text.matchAll(/\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1] as string);
  return names.filter((name, i) => names.indexOf(name) === i);
}

/** `(its port comes from ${P})` and the fix's start, for a part of the url a `${VAR}` gave. */
function fromVariables(names: readonly string[], what: string): { from: string; fix: string } {
  const shown = names.map((n) => `\${${n}}`).join(", ");
  return {
    from: ` (its ${what} comes from ${shown})`,
    fix: `check ${names.join(", ")} in the profile's .env or the environment`,
  };
}

/**
 * What is wrong with the host or port of an `http://` or `https://` url that does not parse (`new URL` threw),
 * said instead of "expected an http:// or https:// URL", which the scheme is: a port outside 1–65535 or not
 * digits, a character no host can hold (a space), an IPv4 address that is none (`256.1.1.1`). `url` is the
 * value, `shown` the url as config.yaml writes it (quoted by the message as `quoted`): a part a `${VAR}` gave
 * is not shown but the variable named. Undefined when none of these is it.
 */
export function urlAuthorityProblem(url: string, shown: string, quoted: string): string | undefined {
  const value = authority(url);
  if (value === undefined) return undefined;
  const written = authority(shown);
  // The part as config.yaml writes it: a whole url from one `${MCP_URL}` writes none of it.
  const given = (part: "host" | "port") => {
    const text = written === undefined ? shown : written[part];
    return text !== undefined && text.includes("${") ? variablesIn(text) : [];
  };
  const { host, port } = value;
  if (port !== undefined && port !== "" && !(/^\d+$/.test(port) && Number(port) <= 65535)) {
    const digits = /^\d+$/.test(port);
    const names = given("port");
    if (names.length > 0) {
      const { from, fix } = fromVariables(names, "port");
      return `${quoted} names a port ${digits ? "outside 1–65535" : "that is not digits"}${from} — ${fix}: a port is a number from 1 to 65535, the one the MCP server listens on`;
    }
    return `${quoted} names port ${digits ? port : JSON.stringify(port)}, ${digits ? "outside 1–65535" : "which is not digits"} — write the port the MCP server listens on (a number from 1 to 65535)`;
  }
  if (host.startsWith("[")) return undefined;
  const names = given("host");
  const from = names.length > 0 ? fromVariables(names, "host") : undefined;
  // A host a `${VAR}` gave is not shown: the message names the variable.
  const named = (what: string) =>
    from === undefined
      ? `${quoted} names host ${JSON.stringify(host)}, which ${what}`
      : `${quoted} names a host that ${what}${from.from}`;
  const fix = from?.fix ?? "write the server's host name or address";
  const bad = [...host].find((c) => !URL.canParse(`http://a${c}b/`));
  if (bad !== undefined)
    return `${named(`holds ${bad === " " ? "a space" : JSON.stringify(bad)}`)} — ${fix}: a host name cannot hold ${bad === " " ? "one" : "it"}`;
  // A host whose last label is a number is read as an IPv4 address (as a browser reads it).
  if (/(?:^|\.)(?:\d+|0x[0-9a-f]*)\.?$/i.test(host))
    return `${named("is not a valid IPv4 address")} — ${fix} (a host ending in a number is read as an IPv4 address: four numbers, each from 0 to 255)`;
  return undefined;
}
