import type { PlatformConfig } from "../../config/sections/platforms.js";
import { stringField, tokenClient } from "./client.js";
import { DeliveryError, type DeliveryTarget, runOnce } from "./target.js";

const SERVICE_NAME = /^[a-z0-9_]+$/;

/**
 * Home Assistant REST API: `POST /api/services/notify/<service>` with a long-lived access token.
 * The service is `deliver_extra.chat_id` (or `service`), else `home_channel`, else `notify`.
 */
export function homeAutomationTarget(settings: PlatformConfig<"home_automation">): DeliveryTarget {
  const api = tokenClient("home_automation", settings);
  return {
    name: "home_automation",
    check: async (signal) => stringField(await api.call("api status", "GET", "/api/", { signal }), "message"),
    async send(message, signal, options = {}) {
      const service =
        message.extra.chat_id?.trim() || message.extra.service?.trim() || settings.home_channel || "notify";
      if (!SERVICE_NAME.test(service)) {
        throw new DeliveryError(
          `home_automation: "${service}" is not a notify service name (lower-case letters, digits, "_")`,
          false,
        );
      }
      const title = message.extra.title;
      const json = { message: message.text, ...(title === undefined ? {} : { title }) };
      await (options.runStep ?? runOnce)(() =>
        api.call(`notify.${service}`, "POST", `/api/services/notify/${service}`, { json, signal }),
      );
      return { chatId: service };
    },
  };
}
