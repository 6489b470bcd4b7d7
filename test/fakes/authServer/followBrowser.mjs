// A stand-in for a web browser in $BROWSER: follows the authorization redirects of the URL it is
// given (keeping cookies) until a page answers, then exits. Used by CLI tests.
const jar = new Map();
let url = process.argv[2];
for (let hop = 0; hop < 20 && url; hop++) {
  const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
  const res = await fetch(url, { redirect: "manual", headers: cookie ? { cookie } : {} });
  for (const set of res.headers.getSetCookie()) {
    const pair = set.split(";")[0] ?? "";
    const eq = pair.indexOf("=");
    if (eq > 0) jar.set(pair.slice(0, eq).trim(), pair.slice(eq + 1));
  }
  const location = res.headers.get("location");
  await res.arrayBuffer();
  url = res.status >= 300 && res.status < 400 && location ? new URL(location, url).href : undefined;
}
