import { type ChildProcess, spawn } from "node:child_process";
import { PassThrough } from "node:stream";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import { cutText } from "../cutText.js";
import { followWorkingDirectory } from "../goneDirectory.js";
import { standsBack } from "../heldSignals.js";
import type { GroupNote } from "../processGroups.js";
import { CREDENTIAL_REACH, redactedStart } from "./redactedStart.js";
import { unreadableAnswer, withoutNullMembers } from "./unreadableAnswer.js";

/**
 * The largest message a stdio server may write (one line of JSON). The SDK's own transport stops at
 * 10 MB of buffered output, which a tool returning a large file or image reaches; HTTP transports have
 * no such limit. Past this one svc closes the connection and says why, rather than buffering forever.
 */
export const MAX_STDIO_MESSAGE_BYTES = 64 * 1024 * 1024;

/** How long a server gets after its stdin closes, then after SIGTERM, before the next step. */
export const EXIT_GRACE_MS = 2000;

export interface StdioOptions {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Record<string, string>;
  /** The server process exited: `code 3` or `signal SIGKILL`. */
  readonly onExit?: (how: string) => void;
  /**
   * svc closed the connection because the server broke the protocol; `tooLong`: with a message over the
   * limit (which the same request would get again), not by closing its stdout.
   */
  readonly onProtocolError?: (reason: string, tooLong?: boolean) => void;
  /** A stdout line that is no JSON-RPC message (a banner, a usage text), at most 1000 characters. */
  readonly onOtherOutput?: (line: string) => void;
  /**
   * The beginning (at most 300 characters) of a stdout line not ended yet, once it starts and again at each
   * chunk of it until `START_CHARS` of it are read; "" once a line break ends it. A message a server writes
   * without its line break is never read.
   */
  readonly onUnfinishedLine?: (start: string) => void;
  /**
   * Redacts credentials from what the process wrote before it is cut for onOtherOutput, onUnfinishedLine and
   * the error standing in for an answer svc cannot read (unreadableAnswer):
   * a cut through one (`user:password` cut after its colon) would leave its start, which a redaction
   * afterwards no longer recognizes.
   */
  readonly redact?: (text: string) => string;
  readonly maxMessageBytes?: number;
  /** How long a process may run on after its stdout ended before svc closes it (1 s). */
  readonly stdoutEndGraceMs?: number;
  /** Notes the server's process group while it runs (the gateway's next start stops one it left). */
  readonly group?: GroupNote;
}

/**
 * A process ending closes its stdout just before it exits; one still running this long after its stdout
 * ended has closed it itself and can answer nothing more.
 */
export const STDOUT_END_GRACE_MS = 1000;

/** How many `{` of a line that is no JSON `gluedAnswer` tries as the start of an answer. */
const GLUED_STARTS = 20;

/** How much of a stdout line not ended yet `onUnfinishedLine` is given. */
const UNFINISHED_CHARS = 300;
/**
 * How much of it is read for that (characters): `redactedStart` shows from all but the last
 * `CREDENTIAL_REACH` of them, so a credential the 300 hold, or that starts among them, is redacted whole and
 * the 300 shown go on past it. The bytes that holds are read (3 per character at most).
 */
const START_CHARS = UNFINISHED_CHARS + 2 * CREDENTIAL_REACH;
const START_BYTES = START_CHARS * 3;

/**
 * A JSON-RPC answer (an object with `jsonrpc`, an `id` and `result` or `error`) at the end of a line that
 * is no JSON, after other text: a server that writes a banner, a prompt or a terminal escape (a title,
 * a hidden cursor) without a line break before its first message, which then shares that line. Only an
 * answer is taken: it can only settle a request svc sent, under its id (a log line echoing a request
 * does not become one).
 */
export function gluedAnswer(text: string): { before: string; message: unknown } | undefined {
  let start = text.indexOf("{", 1);
  for (let tries = 0; start > 0 && tries < GLUED_STARTS; tries++, start = text.indexOf("{", start + 1)) {
    let json: unknown;
    try {
      json = JSON.parse(text.slice(start));
    } catch {
      continue;
    }
    if (
      json !== null &&
      typeof json === "object" &&
      !Array.isArray(json) &&
      (json as Record<string, unknown>).jsonrpc === "2.0" &&
      "id" in json &&
      ("result" in json || "error" in json)
    )
      return { before: text.slice(0, start), message: json };
    return undefined;
  }
  return undefined;
}

/**
 * JSON-RPC over a child's stdin/stdout, newline-delimited, as the SDK's `StdioClientTransport` — with
 * two differences: the child leads its own process group, and closing it signals the whole group, so a
 * server started through a wrapper (`sh run.sh`, a launcher) that outlives its stdin leaves no orphaned
 * grandchild behind; and stdout is split into lines without re-copying the buffer (large results stay
 * linear), up to `MAX_STDIO_MESSAGE_BYTES` per line; a line holding a batch (an array) delivers each of its
 * messages. Lines that are not JSON-RPC (a banner) are reported
 * through `onerror` and skipped, as the SDK does; an answer to a request that is not valid JSON-RPC is
 * delivered as an error answer saying why (`unreadableAnswer`), so its call does not wait out its timeout.
 */
export class StdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** The child's stderr, available before `start()` so no early line is lost. */
  readonly stderr = new PassThrough();
  private child: ChildProcess | undefined;
  private exited: Promise<void> | undefined;
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** `onUnfinishedLine` was told of the line being read, so its end is said too. */
  private unfinishedSaid = false;
  /** It was told the line's start from `START_CHARS` of it: the start is said as it will stay. */
  private startRead = false;
  private closed = false;
  private closing: Promise<void> | undefined;
  private delivery: Promise<void> = Promise.resolve();

  constructor(private readonly options: StdioOptions) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): Promise<void> {
    if (this.child !== undefined) throw new Error("StdioTransport already started");
    // Listening before the child exists: a signal that comes while spawn() returns still stops it.
    watchOwnExit();
    followWorkingDirectory();
    return new Promise((resolve, reject) => {
      const child = spawn(this.options.command, [...this.options.args], {
        env: this.options.env,
        stdio: ["pipe", "pipe", "pipe"],
        shell: false,
        detached: process.platform !== "win32",
        windowsHide: true,
      });
      this.child = child;
      if (child.pid !== undefined) {
        liveGroups.add(child.pid);
        this.options.group?.started(child.pid);
      }
      this.exited = new Promise((done) =>
        child.once("close", () => {
          if (child.pid !== undefined) {
            liveGroups.delete(child.pid);
            this.options.group?.ended(child.pid);
          }
          done();
        }),
      );
      child.once("error", (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.once("spawn", () => resolve());
      child.once("exit", (code, signal) => {
        this.options.onExit?.(signal === null ? `code ${code}` : `signal ${signal}`);
        if (!this.closed) void this.exitedOnItsOwn(child);
      });
      child.once("close", () => {
        this.child = undefined;
        this.onclose?.();
      });
      child.stdin?.on("error", (error) => {
        this.onerror?.(error);
        if ((error as NodeJS.ErrnoException).code === "EPIPE") void this.stdinClosed();
      });
      child.stdout?.on("data", (chunk: Buffer) => this.read(chunk));
      child.stdout?.on("error", (error) => this.onerror?.(error));
      child.stdout?.once("end", () => void this.stdoutEnded());
      child.stderr?.pipe(this.stderr);
    });
  }

  private read(chunk: Buffer): void {
    if (this.closed) return;
    const limit = this.options.maxMessageBytes ?? MAX_STDIO_MESSAGE_BYTES;
    let rest = chunk;
    for (;;) {
      const newline = rest.indexOf(0x0a);
      if (newline === -1) break;
      // A whole line over the limit is refused as well, not only one still being buffered: the limit
      // is the same wherever the pipe happened to cut the output into chunks.
      if (this.buffered + newline > limit) {
        this.tooLong(limit);
        return;
      }
      const line =
        this.chunks.length === 0
          ? rest.subarray(0, newline)
          : Buffer.concat([...this.chunks, rest.subarray(0, newline)]);
      this.chunks = [];
      this.buffered = 0;
      rest = rest.subarray(newline + 1);
      this.startRead = false;
      if (this.unfinishedSaid) {
        this.unfinishedSaid = false;
        this.options.onUnfinishedLine?.("");
      }
      // One message per microtask: the SDK runs a notification's handler a microtask later, so a
      // progress notification read in the same chunk as the call's answer would otherwise reach it after
      // the answer had removed its handler ("unknown token"), and be lost.
      this.delivery = this.delivery.then(() => this.deliver(line));
      if (this.closed) return;
    }
    if (rest.length === 0) return;
    this.buffered += rest.length;
    this.chunks.push(rest);
    if (!this.startRead && this.options.onUnfinishedLine !== undefined)
      this.tellStart(this.options.onUnfinishedLine);
    if (this.buffered > limit) this.tooLong(limit);
  }

  /**
   * Tells the start of the line not ended yet, redacted before it is cut: again at each chunk until
   * `START_CHARS` of it are read, so a credential that the end of a chunk cut through, shown as far as it
   * was read then, is redacted once the next chunk brings the rest of it.
   */
  private tellStart(tell: (start: string) => void): void {
    this.unfinishedSaid = true;
    const bytes = Math.min(this.buffered, START_BYTES);
    const first = this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks, bytes);
    const read = first.subarray(0, bytes).toString("utf8");
    if (read.length < START_CHARS) {
      tell(cutText(this.redacted(read), UNFINISHED_CHARS));
      return;
    }
    this.startRead = true;
    tell(redactedStart(read.slice(0, START_CHARS), UNFINISHED_CHARS, (text) => this.redacted(text)));
  }

  /**
   * stdout ended while the process runs on (it closed its stdout, or a wrapper's child holding it died):
   * no answer can come any more, so every call would wait out its timeout. svc closes the connection and
   * says why, so it reconnects and calls in flight fail at once.
   */
  private async stdoutEnded(): Promise<void> {
    const exited = this.exited;
    if (this.closed || exited === undefined) return;
    // A last line without its newline (a usage text printed with printf before exiting) is a line too.
    if (this.chunks.length > 0) {
      const line = Buffer.concat(this.chunks);
      this.chunks = [];
      this.buffered = 0;
      this.delivery = this.delivery.then(() => this.deliver(line));
    }
    let timer: NodeJS.Timeout | undefined;
    const stillRunning = await Promise.race([
      exited.then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), this.options.stdoutEndGraceMs ?? STDOUT_END_GRACE_MS);
        timer.unref();
      }),
    ]);
    clearTimeout(timer);
    await this.delivery;
    if (!stillRunning || this.closed) return;
    const reason =
      "the server process closed its stdout but kept running, so it could answer nothing more; svc stopped it";
    this.options.onProtocolError?.(reason);
    this.onerror?.(new Error(reason));
    void this.close(true);
  }

  /** Whether `exited` is still pending once the stdout grace has passed (the pipes are held, or the process runs on). */
  private async outlastsGrace(exited: Promise<unknown>): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const outlasted = await Promise.race([
      exited.then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), this.options.stdoutEndGraceMs ?? STDOUT_END_GRACE_MS);
        timer.unref();
      }),
    ]);
    clearTimeout(timer);
    return outlasted;
  }

  /**
   * The process exited without svc closing it (a crash). What it started in its process group has no
   * server left to work for (a browser it drove, a helper its launcher started in the background) and would
   * run on, one more at each restart: the group gets SIGTERM, then SIGKILL 2 s later, as at a stop.
   * One that inherited the pipes also keeps them open, so nothing would tell the connection that no answer
   * can come: past the grace svc lets go of them, and the connection closes as for any exit (calls in
   * flight fail at once). svc's own close escalates by itself, waiting on the pipes.
   */
  private async exitedOnItsOwn(child: ChildProcess): Promise<void> {
    signalGroup(child, "SIGTERM");
    setTimeout(() => signalGroup(child, "SIGKILL"), EXIT_GRACE_MS).unref();
    const exited = this.exited;
    if (exited === undefined) return;
    const held = await this.outlastsGrace(exited);
    if (!held || this.closed) return;
    child.stderr?.unpipe(this.stderr);
    this.stderr.end();
    for (const pipe of [child.stdin, child.stdout, child.stderr]) pipe?.destroy();
  }

  /**
   * A write found no reader (EPIPE): the process closed its stdin, or is ending. One still running after
   * the grace can take no request any more, and every call would wait out its timeout: svc closes the
   * connection and says why, as for a closed stdout.
   */
  private async stdinClosed(): Promise<void> {
    const exited = this.exited;
    if (this.closed || exited === undefined) return;
    const stillRunning = await this.outlastsGrace(exited);
    if (!stillRunning || this.closed) return;
    const reason =
      "the server process closed its stdin but kept running, so it could take no more requests; svc stopped it";
    this.options.onProtocolError?.(reason);
    this.onerror?.(new Error(reason));
    void this.close(true);
  }

  /** A message over the limit: svc closes the connection and says why, rather than buffering on. */
  private tooLong(limit: number): void {
    this.chunks = [];
    this.buffered = 0;
    const reason = `the server wrote a message of more than ${Math.round(limit / 1024 / 1024)} MiB on stdout (svc's limit for one stdio message), so svc closed the connection`;
    this.options.onProtocolError?.(reason, true);
    this.onerror?.(new Error(reason));
    // No point waiting for it to finish a message nobody reads.
    void this.close(true);
  }

  private deliver(line: Buffer): void {
    // A byte-order mark (a .NET or PowerShell server writing UTF-8 with BOM) would make the first line unreadable.
    const text = line
      .toString("utf8")
      .replace(/^\uFEFF/, "")
      .replace(/\r$/, "");
    if (text.trim() === "") return;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      const glued = gluedAnswer(text);
      if (glued === undefined) {
        this.skipped(text, error as Error);
        return;
      }
      // A banner or escape written without a line break shares the answer's line: the text before it is
      // skipped (and kept for a connect error to quote) as any other line; the answer is read.
      this.skipped(glued.before, error as Error);
      this.deliverMessage(glued.message, text.slice(glued.before.length));
      return;
    }
    // A batch (JSON-RPC 2.0, which MCP 2025-03-26 servers may send and its clients must take): each of its
    // messages is read as if it had its own line.
    if (Array.isArray(json) && json.length > 0)
      for (const item of json) this.deliverMessage(item, JSON.stringify(item));
    else this.deliverMessage(json, text);
  }

  private deliverMessage(json: unknown, text: string): void {
    let message: JSONRPCMessage;
    try {
      message = JSONRPCMessageSchema.parse(json);
    } catch (error) {
      const oneMember = withoutNullMembers(json);
      const meant = oneMember === undefined ? undefined : JSONRPCMessageSchema.safeParse(oneMember);
      if (meant?.success === true) {
        this.onmessage?.(meant.data);
        return;
      }
      // An answer svc cannot read fails its call at once, saying so, instead of leaving it to time out.
      const answer = unreadableAnswer(oneMember ?? json, (text) => this.redacted(text));
      if (answer !== undefined) {
        this.onmessage?.(answer);
        return;
      }
      this.skipped(text, error as Error);
      return;
    }
    this.onmessage?.(message);
  }

  /** A line (or batch item) that is no JSON-RPC message: reported and skipped. */
  private skipped(text: string, error: Error): void {
    if (this.options.onOtherOutput !== undefined) {
      const shown = this.redacted(text);
      this.options.onOtherOutput(shown.length > 1000 ? `${cutText(shown, 1000)}…` : shown);
    }
    this.onerror?.(error);
  }

  private redacted(text: string): string {
    return this.options.redact === undefined ? text : this.options.redact(text);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.child?.stdin;
      if (this.closed || stdin === undefined || stdin === null) {
        reject(new Error("Not connected"));
        return;
      }
      if (stdin.write(`${JSON.stringify(message)}\n`)) resolve();
      else stdin.once("drain", resolve);
    });
  }

  /** stdin closed; SIGTERM to the process group after 2 s (at once when `now`); SIGKILL after 2 more. */
  close(now = false): Promise<void> {
    // A second caller (a stop during a recycle) waits for the same end, not less.
    this.closing ??= this.end(now);
    return this.closing;
  }

  /**
   * stdin closed and SIGKILL to the process group at once, with no grace: a connect given up by a command
   * that already waited as long as it was told (`--timeout`). A close waiting meanwhile ends with the exit.
   */
  kill(): void {
    this.closed = true;
    const child = this.child;
    if (child === undefined) return;
    try {
      child.stdin?.end();
    } catch {
      // already gone
    }
    signalGroup(child, "SIGKILL");
  }

  private async end(now: boolean): Promise<void> {
    this.closed = true;
    const child = this.child;
    this.chunks = [];
    if (child === undefined || this.exited === undefined) return;
    const exited = this.exited;
    const within = (ms: number) =>
      Promise.race([
        exited.then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms).unref()),
      ]);
    try {
      child.stdin?.end();
    } catch {
      // already gone
    }
    const gone = now ? false : await within(EXIT_GRACE_MS);
    // Even when the leader is gone, a grandchild it started may still hold the group.
    signalGroup(child, "SIGTERM");
    if (gone) return;
    if (await within(EXIT_GRACE_MS)) return;
    signalGroup(child, "SIGKILL");
  }
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  const pid = child.pid;
  if (pid === undefined) return;
  try {
    if (process.platform === "win32") child.kill(signal);
    else process.kill(-pid, signal);
  } catch {
    // ESRCH: nothing left of the group.
  }
}

/**
 * Process groups of servers still running. A child in its own group no longer gets the Ctrl-C (or the
 * hangup) of the terminal with us: when this process ends without stopping its servers — killed by a
 * signal it has no handler for (Ctrl-C on `svc mcp call`), or `process.exit()` — their groups get
 * SIGTERM here. A program with its own handler for the signal (the gateway) stops them itself, gracefully.
 */
const liveGroups = new Set<number>();
let watching = false;

/** SIGTERM to the process group of every stdio server still running (a process about to die by a signal). */
export function terminateLiveGroups(): void {
  for (const pid of liveGroups) {
    try {
      process.kill(-pid, "SIGTERM");
    } catch {
      // already gone
    }
  }
}

function watchOwnExit(): void {
  if (watching || process.platform === "win32") return;
  watching = true;
  process.on("exit", terminateLiveGroups);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    const onSignal = () => {
      if (process.listenerCount(signal) > 1) return;
      terminateLiveGroups();
      process.removeListener(signal, onSignal);
      // What the signal would have done without this listener: end the process.
      process.kill(process.pid, signal);
    };
    standsBack.add(onSignal);
    process.on(signal, onSignal);
  }
}
