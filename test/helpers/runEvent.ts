import type { AcceptedEvent } from "../../src/streams/context.js";

/** An accepted `push` event of route `r` (agent mode, `log` delivery) whose prompt is `run <id>`. */
export function runEvent(id: string): AcceptedEvent {
  return {
    routeName: "r",
    route: { deliver: "log", deliver_only: false, mirror_to_session: false },
    profile: "default",
    event: "push",
    deliveryId: id,
    payload: {},
    headers: {},
    prompt: `run ${id}`,
    extra: {},
    receivedAt: 0,
  };
}
