import { describe, type WrittenAs } from "../../config/describe.js";

/** A Home Assistant notify service name, as `/api/services/notify/<service>` takes it. */
const SERVICE_NAME = /^[a-z0-9_]+$/;

/**
 * The notify service a route or home channel names, with Home Assistant's `notify.` domain prefix (as its
 * developer tools show `notify.mobile_app_pixel_8`) dropped.
 */
export function notifyService(value: string): string {
  return value.trim().replace(/^notify\./, "");
}

/**
 * Why `value` (a service name, with or without `notify.`) names no notify service (one a `${VAR}` gave,
 * `given`, quoted as the file writes it); undefined when it does
 * (and for no value at all: the persistent notification). `notify.` with nothing after it (a template the
 * event left empty, `notify.{device}`) names none: it is not taken for no value, which would post the
 * message as a persistent notification instead of to the service the route names.
 */
export function notifyServiceProblem(value: string, given?: WrittenAs): string | undefined {
  const service = notifyService(value);
  if (service === "")
    return value.trim() === ""
      ? undefined
      : `${describe(given ?? value.trim())} names no notify service (nothing follows "notify.")`;
  return SERVICE_NAME.test(service)
    ? undefined
    : `${describe(given ?? service)} is not a notify service name (lower-case letters, digits, "_")`;
}
