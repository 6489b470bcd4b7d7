import { chmodSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { execa } from "execa";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { redactCredentials } from "../../../src/io/credentials.js";
import {
  createLogger,
  logInfo,
  pinoOptions,
  redactSecrets,
  safeMessage,
  textLine,
} from "../../../src/io/log.js";
import { CLI_NODE_ARGS, svcModule } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome | undefined;
afterEach(() => home?.cleanup());

describe("log file", () => {
  it.each([true, false])("is created with mode 0600 (buffered: %s)", (buffered) => {
    home = tempHome();
    const file = join(home.dir, "logs", "gateway.log");
    const logger = createLogger({ file, stdout: false, level: "info", buffered });
    logger.info("hello");
    logger.flush();
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it("a logs/ directory that already existed wider (0755) is narrowed to 0700, as docs/operations.md says", () => {
    home = tempHome();
    const dir = join(home.dir, "logs");
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(dir, 0o755);
    const logger = createLogger({ file: join(dir, "gateway.log"), stdout: false, level: "info" });
    logger.info("hello");
    logger.flush();
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });
});

describe("log redaction", () => {
  it("hides secret-named values at the top level and one level down, in any case", () => {
    const fields = {
      route: "pr",
      token: "t-123",
      Authorization: "Bearer abc",
      headers: { authorization: "Bearer def", "x-github-event": "push" },
      oauth: { client_secret: "cs", refresh_token: "rt", Access_Token: "at", api_key: "k" },
    };
    expect(redactSecrets(fields)).toEqual({
      route: "pr",
      token: "[redacted]",
      Authorization: "[redacted]",
      headers: { authorization: "[redacted]", "x-github-event": "push" },
      oauth: {
        client_secret: "[redacted]",
        refresh_token: "[redacted]",
        Access_Token: "[redacted]",
        api_key: "[redacted]",
      },
    });
    // The caller's object is left as it was.
    expect(fields.token).toBe("t-123");
    expect(fields.headers.authorization).toBe("Bearer def");
  });

  it("hides Bearer and Basic credentials quoted in any text (a server echoing the header it refused)", () => {
    const basic = Buffer.from("user:pa55word").toString("base64");
    expect(redactCredentials('{"error":"invalid token Bearer sk-live-1234"}')).toBe(
      '{"error":"invalid token Bearer [redacted]"}',
    );
    expect(redactCredentials(`authorization=Basic ${basic} refused`)).toBe(
      "authorization=Basic [redacted] refused",
    );
    expect(redactCredentials("Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig")).toBe("Bearer [redacted]");
    for (const kept of [
      "Basic authentication required",
      "send a Bearer token",
      'WWW-Authenticate: Bearer realm="mcp", error="invalid_token"',
      `set an Authorization header (e.g. "Bearer $\{TOKEN}")`,
    ]) {
      expect(redactCredentials(kept)).toBe(kept);
    }
    const captured: string[] = [];
    const logger = pino(pinoOptions("info"), { write: (line: string) => captured.push(line) });
    logger.warn({ err: "answered: Bearer tok-9876" }, "[mcp] m: 401 Bearer tok-9876");
    expect(captured.join("")).not.toContain("tok-9876");
    expect(captured.join("")).toContain("Bearer [redacted]");
  });

  it("returns the same object when there is nothing to hide", () => {
    const fields = { route: "pr", delivery_id: "d-1", nested: { a: 1 } };
    expect(redactSecrets(fields)).toBe(fields);
  });

  it("keeps secrets out of the gateway log file", () => {
    home = tempHome();
    const file = join(home.dir, "gateway.log");
    const logger = createLogger({ file, stdout: false });
    logger.info({ secret: "s3cr3t-value", headers: { authorization: "Bearer tok-42" } }, "request");
    const text = readFileSync(file, "utf8");
    expect(text).toMatch(/^\S+ INFO request \{"secret":"\[redacted\]"/);
    expect(text).not.toContain("s3cr3t-value");
    expect(text).not.toContain("tok-42");
  });
});

describe("the gateway log file", () => {
  it("holds the same text lines as stdout: a multi-line message with quotes as written, later lines indented, fields after it", async () => {
    home = tempHome();
    const file = join(home.dir, "logs", "gateway.log");
    const script = `
      import { createLogger } from ${JSON.stringify(pathToFileURL(svcModule("io/log.js")).href)};
      const logger = createLogger({ file: ${JSON.stringify(file)}, buffered: true });
      logger.info({ route: "demo" }, 'demo reply:\\n{\\n  "title": "Fix \\\\"the\\\\" parser"\\n}');
    `;
    const child = await execa(process.execPath, [...CLI_NODE_ARGS, "--input-type=module", "-e", script]);
    const logged = readFileSync(file, "utf8");
    expect(logged).toMatch(
      /^\d{4}-\d\d-\d\dT[\d:.]+Z INFO demo reply:\n {2}\{\n {4}"title": "Fix \\"the\\" parser"\n {2}\} \{"route":"demo"\}\n$/,
    );
    expect(child.stdout).toBe(logged.trimEnd());
  });

  it("logInfo writes the very lines logger.info does, redacted the same way, to the file and stdout alike", async () => {
    home = tempHome();
    const cases: Array<[Record<string, string>, string]> = [
      [{ route: "pr", delivery_id: "d-1" }, "[webhook] pr reply:\nReview PR #1 by octocat"],
      [{ route: "demo" }, 'demo reply:\n{\n  "title": "Fix \\"the\\" parser"\n}\r\nend'],
      [
        { route: "r", delivery_id: 'quote " back \\ slash' },
        "escape \u001b[31m red, tab\tand \u2028 sep ✓ 🙂",
      ],
      [{ route: "r", token: "t-123", delivery_id: "Bearer sk-live-1234" }, "says Bearer eyJhbGciOi.x.y"],
      [{}, "no fields"],
      [{ route: "r", delivery_id: "x".repeat(150) }, "y".repeat(300)],
    ];
    const run = (helper: boolean) => `
      import { createLogger, logInfo } from ${JSON.stringify(pathToFileURL(svcModule("io/log.js")).href)};
      Date.now = () => 1764374400123;
      const logger = createLogger({ file: ${JSON.stringify(join(home?.dir ?? "", `${helper}.log`))}, buffered: true });
      for (const [fields, msg] of ${JSON.stringify(cases)})
        ${helper ? "logInfo(logger, fields, msg)" : "logger.info(fields, msg)"};
    `;
    const [viaPino, direct] = await Promise.all(
      [false, true].map((helper) =>
        execa(process.execPath, [...CLI_NODE_ARGS, "--input-type=module", "-e", run(helper)]),
      ),
    );
    const file = (helper: boolean) => readFileSync(join(home?.dir ?? "", `${helper}.log`), "utf8");
    expect(file(true)).toBe(file(false));
    expect(direct?.stdout).toBe(viaPino?.stdout);
    expect(file(true)).toContain("2025-11-29T00:00:00.123Z INFO [webhook] pr reply:\n  Review PR #1");
    expect(file(true)).toContain(
      'says Bearer [redacted] {"route":"r","token":"[redacted]","delivery_id":"Bearer [redacted]"}',
    );
    expect(
      file(true)
        .split("\n")
        .filter((line) => line.startsWith("2025-")),
    ).toHaveLength(cases.length);
  });

  it("logInfo gives a logger with a JSON file pino's JSON line, and writes nothing below the logger's level", () => {
    home = tempHome();
    const file = join(home.dir, "gateway.log");
    const json = createLogger({ file, fileFormat: "json", stdout: false });
    logInfo(json, { route: "r" }, "two\nlines");
    expect(JSON.parse(readFileSync(file, "utf8"))).toMatchObject({
      level: 30,
      route: "r",
      msg: "two\nlines",
    });
    const quiet = join(home.dir, "quiet.log");
    logInfo(createLogger({ file: quiet, stdout: false, level: "warn" }), { route: "r" }, "dropped");
    expect(readFileSync(quiet, "utf8")).toBe("");
  });

  it("fileFormat json keeps pino's JSON lines", () => {
    home = tempHome();
    const file = join(home.dir, "gateway.log");
    createLogger({ file, fileFormat: "json", stdout: false }).warn({ route: "r" }, "two\nlines");
    expect(JSON.parse(readFileSync(file, "utf8"))).toMatchObject({
      level: 40,
      route: "r",
      msg: "two\nlines",
    });
  });
});

describe("terminal log lines", () => {
  const lineOf = (log: (logger: pino.Logger) => void): string => {
    let out = "";
    const logger: pino.Logger = pino(pinoOptions("debug"), { write: (line: string) => (out = line) });
    log(logger);
    return out;
  };

  it("formats a pino line as time, level, message and the call's fields, exactly as parsing it would", () => {
    const samples = [
      lineOf((l) => l.info("plain")),
      lineOf((l) => l.warn({ route: "pr", delivery_id: "d-1" }, 'reply:\nsaid "hi" ,"msg":"x" ✓')),
      lineOf((l) => l.error({ nested: { msg: "inner" }, n: 3 }, "outer")),
      lineOf((l) => l.info({ token: "t" }, "hidden")),
    ];
    for (const json of samples) {
      const { level, time, msg, ...rest } = JSON.parse(json) as Record<string, unknown>;
      const extra = Object.keys(rest).length > 0 ? ` ${JSON.stringify(rest)}` : "";
      const names: Record<number, string> = { 30: "INFO", 40: "WARN", 50: "ERROR" };
      expect(textLine(json)).toBe(
        `${new Date(Number(time)).toISOString()} ${names[Number(level)]} ${safeMessage(String(msg))}${extra}\n`,
      );
    }
    expect(textLine(samples[1] as string)).toContain(
      ' WARN reply:\n  said "hi" ,"msg":"x" ✓ {"route":"pr","delivery_id":"d-1"}\n',
    );
  });

  it("never lets message text start a line of its own or act on the terminal", () => {
    const forged =
      "looks fine\n2026-01-01T00:00:00.000Z ERROR [gateway] forged\r2026-01-01T00:00:00.000Z WARN x";
    const line = textLine(lineOf((l) => l.info(`reply: ${forged}\u001b[2J\u0007 end\u2028next`)));
    const lines = line.trimEnd().split("\n");
    expect(lines).toHaveLength(4);
    expect(lines.slice(1).every((rest) => rest.startsWith("  "))).toBe(true);
    expect(lines[1]).toBe("  2026-01-01T00:00:00.000Z ERROR [gateway] forged");
    for (const control of ["\r", "\u001b", "\u0007", "\u2028"]) expect(line).not.toContain(control);
    expect(lines[2]).toBe("  2026-01-01T00:00:00.000Z WARN x\\u001b[2J\\u0007 end");
    expect(lines[3]).toBe("  next");
    expect(safeMessage("tab\tkept, plain text untouched")).toBe("tab\tkept, plain text untouched");
  });

  it("never lets a field's text (a delivery id, an event type) break the line or act on the terminal", () => {
    // JSON leaves U+2028, U+2029, U+0085 (line breaks to many readers) and C1 controls such as U+009B
    // (a terminal's one-character CSI) as they are; a request's header or body can carry each.
    const forged = "id\u20282026-01-01T00:00:00.000Z ERROR [gateway] forged\u0085\u2029\u009b2J\u007f";
    const expected =
      '{"delivery_id":"id\\u20282026-01-01T00:00:00.000Z ERROR [gateway] forged\\u0085\\u2029\\u009b2J\\u007f"}';
    const viaJson = textLine(lineOf((l) => l.info({ delivery_id: forged }, "[webhook] pr reply:")));
    const parsed = textLine(`{"level":30,"time":0,"delivery_id":${JSON.stringify(forged)}}`);
    for (const line of [viaJson, parsed]) {
      for (const unsafe of ["\u2028", "\u2029", "\u0085", "\u009b", "\u007f"])
        expect(line).not.toContain(unsafe);
      expect(line.trimEnd().endsWith(expected)).toBe(true);
      expect(JSON.parse(line.slice(line.indexOf("{")))).toEqual({ delivery_id: forged });
    }
    expect(textLine(lineOf((l) => l.info({ route: "pr ✓ 🙂" }, "x")))).toMatch(
      / INFO x \{"route":"pr ✓ 🙂"\}\n$/,
    );
  });

  it("shows a bidi override or zero-width character in a field or message escaped, so a line cannot read as another", () => {
    // Raw, U+202E makes the rest of the line (the fields after the message too) display right to left.
    const id = "dlv-\u202e4321\u2066\u200b";
    const expected = '{"delivery_id":"dlv-\\u202e4321\\u2066\\u200b","event":"push"}';
    const viaJson = textLine(
      lineOf((l) => l.info({ delivery_id: id, event: "push" }, "reply: PR \u202eevil\u200f")),
    );
    const parsed = textLine(
      `{"level":30,"time":0,"msg":"x","delivery_id":${JSON.stringify(id)},"event":"push"}`,
    );
    for (const line of [viaJson, parsed]) {
      expect(line).not.toMatch(/[\u202e\u2066\u200b\u200f]/);
      expect(line.trimEnd().endsWith(expected)).toBe(true);
      expect(JSON.parse(line.slice(line.indexOf("{")))).toEqual({ delivery_id: id, event: "push" });
    }
    expect(viaJson).toContain(" INFO reply: PR \\u202eevil\\u200f {");
    // Legitimate text stays as written: accents, CJK, Hebrew, emoji with their joiners.
    const text = "café 中文 עברית 👩‍💻 می‌خواهم";
    expect(safeMessage(text)).toBe(text);
    expect(textLine(lineOf((l) => l.info({ title: text }, text)))).toContain(
      ` INFO ${text} {"title":"${text}"}\n`,
    );
  });

  it("handles a line without a message and passes anything that is not JSON through", () => {
    const json = lineOf((l) => l.info({ only: "fields" }));
    expect(textLine(json)).toMatch(/ INFO {2}\{"only":"fields"\}\n$/);
    expect(textLine("not json\n")).toBe("not json\n");
  });
});
