/**
 * The URL rules of a self-hosted client metadata document (`oauth.client_metadata_url`): checked when
 * `config.yaml` is loaded and again before a login uses the document. Returns the problem or undefined.
 */
export function clientMetadataUrlProblem(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "is not a URL";
  }
  if (url.protocol !== "https:") return "must use https";
  if (url.username !== "" || url.password !== "" || /^[\0- ]*https:[/\\\t\n\r]*[^/\\?#]*@/i.test(raw))
    return "must not contain userinfo";
  // The URL as the URL parser (and so fetch) reads it: control characters and spaces around it and tabs and
  // line breaks in it dropped, `\` a `/` in an https URL; `/a\..\client.json`, `/a/.<tab>./client.json`
  // or `/a/.. ` has a dot segment as `/a/../client.json` has; the parser takes any number of slashes after
  // `https:`, so `https:app.example.com` and `https:///app.example.com` are https://app.example.com/.
  const read = raw
    .replace(/^[\0- ]+|[\0- ]+$/g, "")
    .replace(/[\t\n\r]/g, "")
    .replace(/\\/g, "/");
  if (read.includes("#")) return "must not contain a fragment";
  const rawPath = read.replace(/^https:\/*[^/?#]*/i, "").split(/[?#]/)[0] ?? "";
  if (rawPath === "" || rawPath === "/") return "must have a path";
  const segments = rawPath.split("/");
  if (segments.some((s) => s === "." || s === ".." || /^(%2e|\.){1,2}$/i.test(s)))
    return "must not contain . or .. segments";
  return undefined;
}
