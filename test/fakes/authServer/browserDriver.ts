/**
 * Plays the browser: follows the authorization server's redirects (keeping cookies) until the
 * loopback callback answers. Returns the final status and URL.
 */
export async function followAuthorization(start: string, maxHops = 20): Promise<{ status: number; url: string; body: string }> {
  const jar = new Map<string, string>();
  let url = start;
  let method = "GET";
  let body: string | undefined;
  for (let hop = 0; hop < maxHops; hop++) {
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
    const res = await fetch(url, {
      method,
      redirect: "manual",
      headers: { ...(cookie ? { cookie } : {}), ...(body !== undefined ? { "content-type": "application/x-www-form-urlencoded" } : {}) },
      ...(body !== undefined ? { body } : {}),
    });
    for (const set of res.headers.getSetCookie()) {
      const [pair] = set.split(";");
      const eq = pair?.indexOf("=") ?? -1;
      if (pair && eq > 0) jar.set(pair.slice(0, eq).trim(), pair.slice(eq + 1));
    }
    const location = res.headers.get("location");
    if (res.status >= 300 && res.status < 400 && location) {
      url = new URL(location, url).href;
      method = "GET";
      body = undefined;
      await res.arrayBuffer();
      continue;
    }
    return { status: res.status, url, body: await res.text() };
  }
  throw new Error("too many redirects");
}
