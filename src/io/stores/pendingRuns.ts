import { existsSync, renameSync, rmSync, statSync } from "node:fs";
import { z } from "zod";
import type { RunRecord } from "../../agent/runRecord.js";
import { SvcError } from "../../errors.js";
import { jsonErrorLocation } from "../jsonErrorLocation.js";
import { narrowMode } from "../privateMode.js";
import { zeroFilledProblem } from "../zeroFilled.js";
import { writeJsonAtomic } from "./atomicFile.js";
import { readStoreText } from "./storeText.js";

/**
 * An accepted agent run that had not finished when the gateway stopped: what it needs to run again
 * after a restart. The route is kept by name (its configuration, which may hold its secret, is not
 * written here); the prompt and delivery extras are already rendered.
 */
export interface PendingRun {
  readonly profile: string;
  readonly routeName: string;
  readonly event: string | undefined;
  readonly deliveryId: string;
  /**
   * The request named no delivery id: `deliveryId` is one the gateway made (`AcceptedEvent.madeId`), which
   * no sender sends again. Absent otherwise, and on a run saved by a version that did not record it.
   */
  readonly madeId?: true | undefined;
  readonly prompt: string;
  readonly extra: Readonly<Record<string, string>>;
  /**
   * The keys of `extra` whose template the event left unfilled (`AcceptedEvent.unfilled`). Absent on a run
   * saved by a version that did not record them: a delivery then tells an unfilled one by its text.
   */
  readonly unfilled?: readonly string[] | undefined;
  readonly receivedAt: number;
  /**
   * A fire of a `cron_job` route: the job it fires (as the route named it). Absent on an agent run, and on
   * a fire saved by a version that did not record it (its route's `cron_job` at the start then decides).
   */
  readonly cronJob?: string;
  /**
   * The reply its agent made, when the run stopped while that reply was being delivered (a split message's
   * later parts, a retry's wait): the run delivers it without running the agent again. Absent on a run
   * stopped before its reply was made, and on one saved by a version that did not keep it.
   */
  readonly reply?: SavedReply;
  /**
   * Where that delivery stood: the retry it waited for (when it is due, epoch ms, and the attempts its
   * request made), the parts of a split message delivered before the one it goes on with, the target, and
   * the recipients it retries when the platform took the message for the others. The delivery goes on from
   * there, once the retry is due, its attempts counted on.
   */
  readonly retry?: SavedRetry;
}

/** A reply a run keeps with it while its delivery goes on (`PendingRun.reply`). */
export interface SavedReply {
  readonly text: string;
  readonly record?: RunRecord;
  /** Why the agent failed, when the reply is its failure notice: the run still fails once delivered. */
  readonly failed?: string;
  /** The id a cron job's fire was delivered under: the delivery that goes on sends under it too. */
  readonly deliveryId?: string;
}

/** Where the delivery of a kept reply stood (`PendingRun.retry`). */
export interface SavedRetry {
  readonly dueAt: number;
  readonly attempts: number;
  readonly partsDelivered?: number;
  readonly target?: string;
  readonly recipients?: readonly string[];
}

/** A kept reply as a file or a record holds it; one that is not (edited by hand) is dropped, the run kept. */
const savedReplySchema = z.looseObject({
  text: z.string(),
  record: z.looseObject({}).optional(),
  failed: z.string().optional(),
  deliveryId: z.string().optional(),
});

const savedRetrySchema = z.looseObject({
  dueAt: z.number(),
  attempts: z.number().int().nonnegative(),
  partsDelivered: z.number().int().nonnegative().optional(),
  target: z.string().optional(),
  recipients: z.array(z.string()).optional(),
});

/**
 * `run` with its kept reply and delivery as they are, or without those that are not a reply and a delivery
 * this version reads (a hand edit): the run then runs its agent again, as one saved without them.
 */
export function withReadableReply<T extends object>(run: T): T {
  const { reply, retry, ...rest } = run as { reply?: unknown; retry?: unknown };
  if (reply === undefined && retry === undefined) return run;
  const replyOk = savedReplySchema.safeParse(reply).success;
  const retryOk = retry === undefined || savedRetrySchema.safeParse(retry).success;
  return replyOk && retryOk ? run : (rest as T);
}

// Loose: a field a newer version saves with a run stays with it (into the journal, which keeps it too).
const pendingRunSchema = z.looseObject({
  profile: z.string(),
  routeName: z.string(),
  event: z.string().optional(),
  deliveryId: z.string(),
  prompt: z.string(),
  extra: z.record(z.string(), z.string()),
  unfilled: z.array(z.string()).optional(),
  receivedAt: z.number(),
  cronJob: z.string().optional(),
});

const fileSchema = z.object({ version: z.literal(1), runs: z.array(z.unknown()) });
const FILE_KEYS = new Set(Object.keys(fileSchema.shape));

export interface PendingRunsFile {
  readonly runs: PendingRun[];
  /** Entries that are not pending runs: written back as they were, never dropped. */
  readonly unreadable: unknown[];
  /** What is wrong with the first of `unreadable`, where the file has it (`runs[1].deliveryId: missing`). */
  readonly firstProblem?: string;
}

/** The first issue of an entry that is no pending run, at its place in the file: `runs[1].deliveryId: missing`. */
function problemOf(index: number, issues: readonly z.core.$ZodIssue[]): string {
  const issue = issues[0];
  if (issue === undefined) return `runs[${index}]: not an agent run`;
  const where = `runs[${index}]${issue.path.map((key) => (typeof key === "number" ? `[${key}]` : `.${String(key)}`)).join("")}`;
  const what =
    issue.code === "invalid_type" && issue.message.endsWith("received undefined")
      ? "missing"
      : issue.message.replace(/^Invalid input: /, "");
  return `${where}: ${what}`;
}

/** The runs saved at earlier shutdowns; no file is none. A file that is not such a list throws. */
export function readPendingRuns(path: string): PendingRunsFile {
  if (!existsSync(path)) return { runs: [], unreadable: [] };
  let parsed: z.infer<typeof fileSchema>;
  let json: unknown;
  const text = readStoreText(path);
  const zeros = zeroFilledProblem(text);
  if (zeros !== undefined) throw new SvcError("store_corrupt", `${path}: ${zeros}`);
  try {
    json = JSON.parse(text);
  } catch (err) {
    // Where it breaks, not what is there: the file holds payload text.
    const { line, column } = jsonErrorLocation(text, err);
    const lines = text.split("\n");
    const cut = line === lines.length && column === (lines.at(-1)?.length ?? 0) + 1;
    throw new SvcError(
      "store_corrupt",
      `${path}: not valid JSON at line ${line}, column ${column}${cut ? " (it ends there, as a write cut short leaves it)" : ""}`,
    );
  }
  try {
    parsed = fileSchema.parse(json);
  } catch {
    const version = (json as { version?: unknown } | null | undefined)?.version;
    throw new SvcError(
      "store_corrupt",
      typeof version === "number" && version !== 1
        ? `${path}: format version ${version}, written by a newer version of svc (this one reads version 1)`
        : `${path}: not a list of pending agent runs ({"version": 1, "runs": [...]})`,
    );
  }
  // A top-level key of a newer version's is not dropped: the file is refused (moved aside) whole.
  const unknownKey = Object.keys(json as object).find((key) => !FILE_KEYS.has(key));
  if (unknownKey !== undefined)
    throw new SvcError(
      "store_corrupt",
      `${path}: holds ${JSON.stringify(unknownKey)}, a key this version of svc does not know (written by a newer version)`,
    );
  const runs: PendingRun[] = [];
  const unreadable: unknown[] = [];
  let firstProblem: string | undefined;
  for (const [index, entry] of parsed.runs.entries()) {
    const run = pendingRunSchema.safeParse(entry);
    if (!run.success) {
      unreadable.push(entry);
      firstProblem ??= problemOf(index, run.error.issues);
      continue;
    }
    const { cronJob, unfilled, ...saved } = withReadableReply(run.data);
    runs.push({
      ...saved,
      event: saved.event,
      ...(unfilled === undefined ? {} : { unfilled }),
      ...(cronJob === undefined ? {} : { cronJob }),
    } as PendingRun);
  }
  return firstProblem === undefined ? { runs, unreadable } : { runs, unreadable, firstProblem };
}

/** Replaces the file (atomically, mode 0600: prompts carry payload text); nothing left removes it. */
export function writePendingRuns(path: string, file: PendingRunsFile): void {
  if (file.runs.length === 0 && file.unreadable.length === 0) {
    rmSync(path, { force: true });
    return;
  }
  writeJsonAtomic(path, { version: 1, runs: [...file.runs, ...file.unreadable] });
}

/** What a start says of a pending-runs file it cannot take whole (`src/gateway/logHooks.ts`). */
export interface PendingRunsReport {
  /** The file cannot be read at all: it was moved aside to `movedTo` (or could not be: `movedTo` is `file`). */
  readonly onPendingUnreadable: (file: string, movedTo: string, err: unknown) => void;
  /** Entries that are no run this version can read: kept in the file as they were, not run. */
  readonly onPendingEntriesKept: (file: string, count: number, firstProblem: string) => void;
}

/**
 * The runs saved at earlier shutdowns, or undefined when the file cannot be read: it is then moved aside
 * (`<file>.unreadable-<ms>`, kept for the user to look at) and reported, so the next start is not stuck on it.
 * Entries that are no run this version can read stay in the file, and are reported too: nothing the file
 * holds is left unrun without a word.
 */
export function readPendingRunsOrMoveAside(
  path: string,
  report: PendingRunsReport,
): PendingRunsFile | undefined {
  let saved: PendingRunsFile;
  try {
    saved = readPendingRuns(path);
  } catch (err) {
    const movedTo = `${path}.unreadable-${Date.now()}`;
    try {
      renameSync(path, movedTo);
      // Its prompts carry payload text: kept aside private, as the file itself is written (a restored
      // backup may have come wider). A directory in its place is left as it is.
      if (statSync(movedTo, { throwIfNoEntry: false })?.isFile() === true) narrowMode(movedTo, 0o600);
      report.onPendingUnreadable(path, movedTo, err);
    } catch (renameErr) {
      report.onPendingUnreadable(path, path, renameErr);
    }
    return undefined;
  }
  if (saved.firstProblem !== undefined)
    report.onPendingEntriesKept(path, saved.unreadable.length, saved.firstProblem);
  return saved;
}
