import { request } from "node:http";
import { describe, expect, it } from "vitest";
import { bindCallbackServer } from "../../../src/io/oauth/callbackServer.js";

function get(port: number, path: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    request({ host: "127.0.0.1", port, path, headers: { host } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    })
      .on("error", reject)
      .end();
  });
}

describe("loopback callback listener", () => {
  it("accepts only /callback with Host 127.0.0.1:<port> or localhost:<port> and the expected state", async () => {
    const cb = await bindCallbackServer({ pinned: false });
    try {
      expect(cb.redirectUri).toBe(`http://127.0.0.1:${cb.port}/callback`);
      const code = cb.waitForCode("the-state");
      expect(await get(cb.port, "/callback?code=c&state=the-state", `evil.test:${cb.port}`)).toBe(404);
      expect(await get(cb.port, "/other?code=c&state=the-state", `127.0.0.1:${cb.port}`)).toBe(404);
      expect(await get(cb.port, "/callback?code=c&state=wrong", `localhost:${cb.port}`)).toBe(400);
      expect(await get(cb.port, "/callback?code=good&state=the-state&iss=x", `localhost:${cb.port}`)).toBe(
        200,
      );
      await expect(code).resolves.toEqual({ code: "good", iss: "x" });
    } finally {
      await cb.close();
    }
  });

  it("turns an error redirect into a login failure", async () => {
    const cb = await bindCallbackServer({ pinned: false });
    try {
      const code = cb.waitForCode("s");
      const failed = expect(code).rejects.toThrow(/refused the login: access_denied \(user said no\)/);
      expect(
        await get(
          cb.port,
          "/callback?error=access_denied&error_description=user%20said%20no&state=s",
          `127.0.0.1:${cb.port}`,
        ),
      ).toBe(400);
      await failed;
    } finally {
      await cb.close();
    }
  });

  it("reports a busy fixed redirect port with the keys to change", async () => {
    const cb = await bindCallbackServer({ pinned: false });
    try {
      await expect(bindCallbackServer({ pinned: false, port: cb.port })).rejects.toThrow(
        /oauth\.redirect_port/,
      );
    } finally {
      await cb.close();
    }
  });
});
