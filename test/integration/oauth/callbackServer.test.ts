import { request } from "node:http";
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { bindCallbackServer } from "../../../src/io/oauth/callbackServer.js";
import { tempHome } from "../../helpers/home.js";
import { harness, loginWith } from "./helpers.js";

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

  it("an error redirect's text stays on one line: a newline in error_description cannot fake a line of output", async () => {
    const cb = await bindCallbackServer({ pinned: false });
    try {
      const code = cb.waitForCode("s");
      const failed = code.then(
        () => new Error("the redirect was accepted"),
        (err: unknown) => err as Error,
      );
      const desc = encodeURIComponent("denied\r\nsrv: logged in\nok");
      expect(
        await get(
          cb.port,
          `/callback?error=access_denied&error_description=${desc}&state=s`,
          `127.0.0.1:${cb.port}`,
        ),
      ).toBe(400);
      const message = (await failed).message;
      expect(message).toBe(
        "authorization server refused the login: access_denied (denied srv: logged in ok)",
      );
      expect(message).not.toMatch(/[\r\n]/);
    } finally {
      await cb.close();
    }
  });

  it("reports a busy fixed redirect port naming the server's key (redirect_port or redirect_uri)", async () => {
    const cb = await bindCallbackServer({ pinned: false });
    const home = tempHome();
    try {
      await expect(bindCallbackServer({ pinned: false, port: cb.port })).rejects.toThrow(
        /oauth\.redirect_port/,
      );
      // Before any request: the login fails at once, naming the entry, not a bare port.
      const url = "http://127.0.0.1:9/mcp";
      await expect(loginWith(harness(home.dir, "notes", url, { redirect_port: cb.port }))).rejects.toThrow(
        `notes: mcp_servers.notes.oauth.redirect_port: callback port ${cb.port} is busy — free it, or choose another port`,
      );
      const uri = `http://localhost:${cb.port}/cb`;
      await expect(loginWith(harness(home.dir, "notes", url, { redirect_uri: uri }))).rejects.toThrow(
        `notes: mcp_servers.notes.oauth.redirect_uri ${uri}: callback port ${cb.port} is busy`,
      );
    } finally {
      await cb.close();
      home.cleanup();
    }
  });

  it("a request line whose absolute-form target is not a URL gets 400; the listener keeps waiting for the login", async () => {
    const cb = await bindCallbackServer({ pinned: false });
    try {
      const code = cb.waitForCode("s");
      const status = await new Promise<string>((resolve, reject) => {
        const socket = connect(cb.port, "127.0.0.1");
        let text = "";
        socket.on("data", (d) => {
          text += String(d);
        });
        socket.on("error", reject);
        socket.on("close", () => resolve(text.split("\r\n")[0] ?? ""));
        socket.end(`GET http://[ HTTP/1.1\r\nHost: 127.0.0.1:${cb.port}\r\nConnection: close\r\n\r\n`);
      });
      expect(status).toBe("HTTP/1.1 400 Bad Request");
      expect(await get(cb.port, "/callback?code=ok&state=s", `127.0.0.1:${cb.port}`)).toBe(200);
      await expect(code).resolves.toEqual({ code: "ok" });
    } finally {
      await cb.close();
    }
  });

  it("an error redirect with a wrong state does not end the login; a second callback after the code gets an error page", async () => {
    const cb = await bindCallbackServer({ pinned: false });
    try {
      const code = cb.waitForCode("s");
      const host = `127.0.0.1:${cb.port}`;
      expect(await get(cb.port, "/callback?error=access_denied&state=forged", host)).toBe(400);
      // The page cannot know yet whether the exchange and the issuer check succeed: it claims no login.
      const page = await fetch(`http://${host}/callback?code=first&state=s`);
      expect(page.status).toBe(200);
      const text = await page.text();
      expect(text).toContain("the terminal shows whether the login completed");
      expect(text).not.toMatch(/logged in/);
      await expect(code).resolves.toEqual({ code: "first" });
      expect(await get(cb.port, "/callback?code=second&state=s", host)).toBe(400);
    } finally {
      await cb.close();
    }
    await expect(get(cb.port, "/callback?code=late&state=s", `127.0.0.1:${cb.port}`)).rejects.toThrow(
      /ECONNREFUSED/,
    );
  });

  it("a redirect repeating a parameter (code, state, iss, error) gets a 400 page naming it and fails the login", async () => {
    const host = (port: number) => `127.0.0.1:${port}`;
    for (const [query, repeated] of [
      ["code=a&code=b&state=s", "code"],
      ["code=a&state=s&state=s", "state"],
      ["code=a&state=other&state=s", "state"],
      ["code=a&state=s&iss=x&iss=x", "iss"],
      ["error=access_denied&error=server_error&state=s", "error"],
    ] as const) {
      const cb = await bindCallbackServer({ pinned: false });
      try {
        const failed = cb.waitForCode("s").then(
          () => new Error("the redirect was accepted"),
          (err: unknown) => err as Error,
        );
        const page = await fetch(`http://${host(cb.port)}/callback?${query}`);
        expect(page.status).toBe(400);
        expect(await page.text()).toContain(`The redirect carried ${repeated} more than once`);
        expect((await failed).message).toBe(
          `authorization redirect carried ${repeated} more than once (a redirect carries each parameter once, so which value the server meant is unknown); login refused`,
        );
      } finally {
        await cb.close();
      }
    }
  });

  it("a repeated state none of whose values is the login's is not its redirect: the login keeps waiting", async () => {
    const cb = await bindCallbackServer({ pinned: false });
    try {
      const code = cb.waitForCode("s");
      const host = `127.0.0.1:${cb.port}`;
      expect(await get(cb.port, "/callback?code=a&state=x&state=y", host)).toBe(400);
      expect(await get(cb.port, "/callback?code=good&state=s", host)).toBe(200);
      await expect(code).resolves.toEqual({ code: "good" });
    } finally {
      await cb.close();
    }
  });

  it("refuses an oauth.redirect_uri that is not a loopback http URL, naming the key and an example", async () => {
    for (const bad of ["not a url", "https://127.0.0.1:8976/callback", "http://example.com:8976/callback"]) {
      await expect(bindCallbackServer({ pinned: false, redirectUri: bad })).rejects.toThrow(
        /^oauth\.redirect_uri .* (is not a URL|must be http:\/\/ on 127\.0\.0\.1, localhost or \[::1\]).* — (use|e\.g\.) http:\/\/127\.0\.0\.1:/,
      );
    }
  });

  it("refuses an oauth.redirect_uri naming port 0 at once: the server would be sent a callback no listener is on", async () => {
    // Bound to a free port while the server was sent :0, the redirect went nowhere and the login waited five minutes.
    await expect(
      bindCallbackServer({ pinned: false, redirectUri: "http://127.0.0.1:0/callback" }),
    ).rejects.toThrow(
      "oauth.redirect_uri http://127.0.0.1:0/callback names port 0, which no redirect can reach — write the port the client's callback is registered with, or leave the port out (http://127.0.0.1/callback) to listen on a free one",
    );
  });

  it("refuses an oauth.redirect_uri with a fragment at once, instead of sending it to the server", async () => {
    await expect(
      bindCallbackServer({ pinned: false, redirectUri: "http://127.0.0.1:8995/cb#frag" }),
    ).rejects.toThrow("oauth.redirect_uri http://127.0.0.1:8995/cb#frag has a fragment (#...)");
  });

  it("oauth.redirect_port and an oauth.redirect_uri naming another port are refused; a port-less redirect_uri takes redirect_port", async () => {
    await expect(
      bindCallbackServer({ pinned: false, port: 28123, redirectUri: "http://127.0.0.1:28124/callback" }),
    ).rejects.toThrow(
      /^oauth\.redirect_uri http:\/\/127\.0\.0\.1:28124\/callback names port 28124 but oauth\.redirect_port is 28123 — set only one of them$/,
    );
    const same = await bindCallbackServer({
      pinned: false,
      port: 28125,
      redirectUri: "http://localhost:28125/cb",
    });
    try {
      expect(same.redirectUri).toBe("http://localhost:28125/cb");
      expect(same.port).toBe(28125);
    } finally {
      await same.close();
    }
    const portless = await bindCallbackServer({
      pinned: false,
      port: 28126,
      redirectUri: "http://localhost/cb",
    });
    try {
      expect(portless.redirectUri).toBe("http://localhost:28126/cb");
      expect(portless.port).toBe(28126);
    } finally {
      await portless.close();
    }
  });
  // Port 80 needs root to bind, which the suite's machine has.
  it.skipIf(process.getuid?.() !== 0)(
    "a callback on port 80 (redirect_port: 80, or a redirect_uri naming :80) takes the Host a browser sends there, without the port",
    async () => {
      const cases = [
        { options: { pinned: false, port: 80 }, uri: "http://127.0.0.1:80/callback", path: "/callback" },
        {
          options: { pinned: false, redirectUri: "http://localhost:80/cb" },
          uri: "http://localhost:80/cb",
          path: "/cb",
        },
      ];
      for (const { options, uri, path } of cases) {
        const cb = await bindCallbackServer(options);
        try {
          expect([cb.port, cb.redirectUri]).toEqual([80, uri]);
          const code = cb.waitForCode("s");
          expect(await get(80, `${path}?code=c&state=s`, "evil.test")).toBe(404);
          expect(await get(80, `${path}?code=c&state=s`, "127.0.0.1:8080")).toBe(404);
          expect(await get(80, `${path}?code=c&state=s`, "localhost")).toBe(200);
          await expect(code).resolves.toEqual({ code: "c" });
        } finally {
          await cb.close();
        }
      }
    },
  );
});
