import { parentPort } from "node:worker_threads";
import { stringifyJson } from "../../streams/jsonNumbers/index.js";
import { crossedError, type IndexAnswer, type IndexRequest } from "./indexThread.js";
import { SessionStore } from "./store.js";

/**
 * The session index's thread (see `indexThread.ts`): runs each question with a `SessionStore` of its
 * directory, one at a time in their order, keeping the index's parse here (by the file's identity, as on
 * any thread) rather than on the gateway's thread. `answerHere` is the answer itself, which a test may
 * give a store to run its questions on the test's own thread.
 */
export async function answerHere(request: IndexRequest): Promise<string | boolean | undefined> {
  const store = new SessionStore(request.dir);
  switch (request.op) {
    case "lookup": {
      const record = store.get(request.key);
      return record === undefined ? undefined : stringifyJson(record);
    }
    case "touch":
      return store.touchUnlocked(request.key, request.at);
    case "open":
      return stringifyJson(store.openUnlocked(request.key, request.file, request.meta, request.at));
  }
}

let turn: Promise<unknown> = Promise.resolve();
parentPort?.on("message", ({ id, request }: { id: number; request: IndexRequest }) => {
  turn = turn.then(async () => {
    let reply: IndexAnswer;
    try {
      reply = { id, value: await answerHere(request) };
    } catch (err) {
      reply = { id, error: crossedError(err) };
    }
    parentPort?.postMessage(reply);
  });
});
