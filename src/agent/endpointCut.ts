/**
 * The endpoints' reasons for a turn they cut off themselves, not at a limit of the request's: DeepSeek's
 * `insufficient_system_resource` (inference interrupted for want of the system's resources). What the model
 * wrote up to there is cut short, as at `max_tokens`: a text is incomplete, thinking may never be closed, and
 * the last tool call's arguments may be cut.
 */
const ENDPOINT_CUT: ReadonlySet<string> = new Set(["insufficient_system_resource"]);

/** The endpoint's reason when it is one for a turn it cut off itself (`ENDPOINT_CUT`), else undefined. */
export const endpointCutReason = (raw: unknown): string | undefined =>
  typeof raw === "string" && ENDPOINT_CUT.has(raw) ? raw : undefined;

/**
 * Why an answer the endpoint cut off before it wrote any text (and held no thinking either) is no answer: no
 * limit of svc's was reached, so a request again may get the whole of it.
 */
export const cutByEndpointBeforeAnyText = (reason: string): string =>
  `the model's answer was cut off by the endpoint (finish_reason ${reason}) before it wrote any text — ask again; if it goes on, see the endpoint's documentation for that reason`;
