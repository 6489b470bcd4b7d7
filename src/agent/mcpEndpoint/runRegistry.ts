import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { AgentTool, ToolContext } from "../tools/tool.js";
import type { UnofferedTools } from "../unofferedTools.js";

export interface RegisteredRun {
  readonly tools: readonly AgentTool[];
  readonly context: ToolContext;
  /** Aborted when the run's endpoint closes: calls still running end. */
  readonly signal: AbortSignal;
  /**
   * The run's calls still running, by JSON-RPC request id: each POST is served on its own, so a client's
   * `notifications/cancelled` arrives on another POST than the call it cancels, and finds it here.
   */
  readonly calls: Map<string, AbortController>;
  /** Why a call names a tool the run was not offered (`unofferedServerTools`). */
  readonly unoffered?: UnofferedTools;
}

interface Entry extends RegisteredRun {
  readonly tokenDigest: Buffer;
  readonly controller: AbortController;
}

const digest = (token: string) => createHash("sha256").update(token).digest();

/**
 * The runs that have an endpoint open: a random path key (not secret) and a random bearer token per
 * run. Tokens are compared in constant time (as SHA-256 digests, so lengths never differ) and are
 * forgotten when the run's endpoint closes.
 */
export class RunRegistry {
  readonly #runs = new Map<string, Entry>();

  open(
    tools: readonly AgentTool[],
    context: ToolContext,
    unoffered?: UnofferedTools,
  ): { key: string; token: string; close(): void } {
    const key = randomBytes(16).toString("hex");
    const token = randomBytes(32).toString("base64url");
    const controller = new AbortController();
    this.#runs.set(key, {
      tools,
      context,
      signal: controller.signal,
      calls: new Map(),
      controller,
      tokenDigest: digest(token),
      ...(unoffered === undefined ? {} : { unoffered }),
    });
    return {
      key,
      token,
      close: () => {
        const entry = this.#runs.get(key);
        this.#runs.delete(key);
        entry?.controller.abort();
      },
    };
  }

  /** The run at `key` when `authorization` is `Bearer <its token>`; undefined otherwise. */
  authorize(key: string, authorization: string | undefined): RegisteredRun | undefined {
    const given = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "")?.[1] ?? "";
    const entry = this.#runs.get(key);
    // The comparison runs whether or not the key is known, so timing tells nothing about either.
    const matches = timingSafeEqual(
      digest(given),
      entry?.tokenDigest ?? digest(randomBytes(32).toString("hex")),
    );
    return entry !== undefined && given !== "" && matches ? entry : undefined;
  }

  get size(): number {
    return this.#runs.size;
  }

  closeAll(): void {
    for (const entry of this.#runs.values()) entry.controller.abort();
    this.#runs.clear();
  }
}
