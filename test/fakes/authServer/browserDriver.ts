/**
 * Plays the browser: follows the authorization server's redirects (keeping cookies) until the
 * loopback callback answers; with `submitForms`, also posts the pages' forms as shown (device
 * verification pages). Returns the final status and URL.
 */
export async function followAuthorization(
  start: string,
  maxHops = 20,
  submitForms = false,
): Promise<{ status: number; url: string; body: string }> {
  const jar = new Map<string, string>();
  let url = start;
  let method = "GET";
  let body: string | undefined;
  for (let hop = 0; hop < maxHops; hop++) {
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
    const res = await fetch(url, {
      method,
      redirect: "manual",
      headers: {
        ...(cookie ? { cookie } : {}),
        ...(body !== undefined ? { "content-type": "application/x-www-form-urlencoded" } : {}),
      },
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
    const text = await res.text();
    const form = submitForms
      ? /<form[^>]*method="post"[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/i.exec(text)
      : null;
    if (res.status === 200 && form) {
      const fields = new URLSearchParams();
      for (const m of (form[2] ?? "").matchAll(/<input[^>]*?name="([^"]+)"[^>]*?>/gi)) {
        const value = /value="([^"]*)"/i.exec(m[0])?.[1] ?? "";
        fields.set(m[1] as string, value);
      }
      url = new URL(form[1] as string, url).href;
      method = "POST";
      body = fields.toString();
      continue;
    }
    return { status: res.status, url, body: text };
  }
  throw new Error("too many redirects");
}
