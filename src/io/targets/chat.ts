import { type SizeUnit, splitMessage } from "./split.js";
import { DeliveryError, type DeliveryMessage, type DeliveryReceipt, runOnce, type SendOptions } from "./target.js";

/** `deliver_extra.chat_id`, else the platform's home channel (spec 4.4). */
export function resolveChatId(
  platform: string,
  message: DeliveryMessage,
  homeChannel: string | undefined,
  keys: readonly string[] = ["chat_id"],
): string {
  const fromExtra = keys.map((key) => message.extra[key]?.trim()).find((value) => value !== undefined && value !== "");
  const chatId = fromExtra ?? homeChannel;
  if (chatId === undefined || chatId === "") {
    throw new DeliveryError(
      `${platform}: no chat to deliver to — set deliver_extra.chat_id on route "${message.route}" or platforms.${platform}.home_channel`,
      false,
    );
  }
  return chatId;
}

/** The forum topic / thread of `deliver_extra` (`message_thread_id`, else `thread_id`). */
export function threadOf(message: DeliveryMessage): string | undefined {
  const thread = message.extra.message_thread_id?.trim() || message.extra.thread_id?.trim();
  return thread === "" ? undefined : thread;
}

export interface ChatSpec {
  readonly platform: string;
  /** The platform's documented message-size limit. */
  readonly limit: number;
  readonly unit?: SizeUnit;
  readonly homeChannel: string | undefined;
  sendPart(chatId: string, text: string, index: number): Promise<unknown>;
}

/** Splits the text to the platform's limit and sends the parts in order, each as one (retryable) step. */
export async function sendChat(spec: ChatSpec, message: DeliveryMessage, options: SendOptions = {}): Promise<DeliveryReceipt> {
  const chatId = resolveChatId(spec.platform, message, spec.homeChannel);
  const runStep = options.runStep ?? runOnce;
  const parts = splitMessage(message.text, spec.limit, spec.unit);
  for (const [index, part] of parts.entries()) {
    await runStep(() => spec.sendPart(chatId, part, index));
  }
  return { chatId, parts: parts.length };
}

/** Converts a numeric id (`"12"`) to a number, as JSON APIs expect; other ids stay strings. */
export function numericOrString(value: string): number | string {
  return /^-?\d{1,15}$/.test(value) ? Number(value) : value;
}
