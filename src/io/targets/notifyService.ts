/** A Home Assistant notify service name, as `/api/services/notify/<service>` takes it. */
const SERVICE_NAME = /^[a-z0-9_]+$/;

/**
 * The notify service a route or home channel names, with Home Assistant's `notify.` domain prefix (as its
 * developer tools show `notify.mobile_app_pixel_8`) dropped.
 */
export function notifyService(value: string): string {
  return value.trim().replace(/^notify\./, "");
}

/** Why `value` (a service name, with or without `notify.`) names no notify service; undefined when it does. */
export function notifyServiceProblem(value: string): string | undefined {
  const service = notifyService(value);
  return service === "" || SERVICE_NAME.test(service)
    ? undefined
    : `"${service}" is not a notify service name (lower-case letters, digits, "_")`;
}
