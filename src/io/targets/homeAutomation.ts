import type { PlatformConfig } from "../../config/sections/platforms.js";
import { httpCall, joinUrl } from "./httpJson.js";
import { DeliveryError, type DeliveryTarget, runOnce } from "./target.js";

const SERVICE_NAME = /^[a-z0-9_]+$/;

/**
 * Home Assistant REST API: `POST /api/services/notify/<service>` with a long-lived access token.
 * The service is `deliver_extra.chat_id` (or `service`), else `home_channel`, else `notify`.
 */
export function homeAutomationTarget(settings: PlatformConfig<"home_automation">): DeliveryTarget {
  const token = settings.token ?? "";
  const timeoutMs = settings.timeout_seconds * 1000;
  const headers = { authorization: `Bearer ${token}` };
  const secrets = [token];
  return {
    name: "home_automation",
    async check(signal) {
      const answer = await httpCall({ platform: "home_automation", action: "api status", method: "GET", url: joinUrl(settings.base_url, "/api/"), headers, timeoutMs, signal, secrets });
      return (answer.body as { message?: string } | undefined)?.message;
    },
    async send(message, signal, options = {}) {
      const service = message.extra.chat_id?.trim() || message.extra.service?.trim() || settings.home_channel || "notify";
      if (!SERVICE_NAME.test(service)) {
        throw new DeliveryError(`home_automation: "${service}" is not a notify service name (lower-case letters, digits, "_")`, false);
      }
      const title = message.extra.title;
      await (options.runStep ?? runOnce)(() =>
        httpCall({
          platform: "home_automation",
          action: `notify.${service}`,
          method: "POST",
          url: joinUrl(settings.base_url, `/api/services/notify/${service}`),
          headers,
          json: { message: message.text, ...(title === undefined ? {} : { title }) },
          timeoutMs,
          signal,
          secrets,
        }),
      );
      return { chatId: service };
    },
  };
}
