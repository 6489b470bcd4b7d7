import type { PlatformConfig } from "../../config/sections/platforms.js";
import { NULL_FIELD, routeRecipient, unfilledNote, unresolvedRecipient } from "./chat.js";
import { stringField, tokenClient } from "./client.js";
import { notifyService, notifyServiceProblem } from "./notifyService.js";
import { wellFormed } from "./split.js";
import { DeliveryError, type DeliveryTarget, runOnce } from "./target.js";

/**
 * Home Assistant reads a notify service's `message` and `title` as Jinja templates (the service schema's
 * `cv.template`) and renders them: payload text holding `{{`, `{%` or `{#` (a workflow's `${{ secrets.X }}`,
 * a code sample) would be refused as an invalid template (HTTP 400) or rendered, losing that text or
 * showing Home Assistant's state in its place. A zero-width space after such a `{` leaves the text as it
 * reads, which Home Assistant then takes as plain text (payload text is untrusted).
 */
export function defuseTemplates(text: string): string {
  return text.replace(/\{(?=[{%#])/g, "{\u200B");
}

/**
 * Home Assistant REST API with a long-lived access token: `POST /api/services/notify/<service>` when a
 * notify service is named (`deliver_extra.chat_id` or `service`, else `home_channel`), otherwise
 * `POST /api/services/persistent_notification/create`, the one notification every Home Assistant has
 * (`notify.notify` exists only once a notify platform is set up).
 */
export function homeAutomationTarget(settings: PlatformConfig<"home_automation">): DeliveryTarget {
  const api = tokenClient("home_automation", settings);
  return {
    name: "home_automation",
    // `GET /api/config` names the installation (`location_name`, `version`); `GET /api/` answers only
    // "API running.", which is no identity for the "connected as" line.
    async check(signal) {
      const answer = await api.call("api config", "GET", "/api/config", { signal });
      const name = stringField(answer, "location_name");
      const version = stringField(answer, "version");
      if (name === undefined) return version === undefined ? undefined : `Home Assistant ${version}`;
      return version === undefined ? name : `${name} (Home Assistant ${version})`;
    },
    async send(message, signal, options = {}) {
      // Home Assistant names services by domain (`notify.mobile_app_pixel_8` in its developer tools): the
      // `notify.` prefix is accepted and dropped.
      const keys = ["chat_id", "service"];
      const fromRoute = routeRecipient("home_automation", message, keys, "service");
      const key =
        fromRoute === undefined ? undefined : keys.find((name) => message.extra[name] !== undefined);
      // A service the event filled with a JSON null (`{device}`, `notify.{device}`) renders `null`, which
      // reads as a service name: it names none, and no `notify.null` is called.
      if (fromRoute !== undefined && notifyService(fromRoute) === "null")
        throw unresolvedRecipient("home_automation", message, key ?? "chat_id", NULL_FIELD, "service");
      const named = fromRoute ?? settings.home_channel ?? "";
      const service = notifyService(named);
      const problem = notifyServiceProblem(named);
      if (problem !== undefined)
        throw new DeliveryError(
          `home_automation: ${problem}${unfilledNote(message, key, named.trim())}`,
          false,
        );
      // A title template the event left blank is no title (the default one for a persistent notification).
      const title = message.extra.title?.trim()
        ? defuseTemplates(wellFormed(message.extra.title))
        : undefined;
      const text = defuseTemplates(wellFormed(message.text));
      const runStep = options.runStep ?? runOnce;
      if (service === "") {
        const json = { message: text, title: title ?? defuseTemplates(`svc: ${message.route}`) };
        await runStep(() =>
          api.call("persistent_notification.create", "POST", "/api/services/persistent_notification/create", {
            json,
            signal,
          }),
        );
        return { chatId: "persistent_notification" };
      }
      const json = { message: text, ...(title === undefined ? {} : { title }) };
      await runStep(() =>
        api.call(`notify.${service}`, "POST", `/api/services/notify/${service}`, { json, signal }),
      );
      return { chatId: service };
    },
  };
}
