// An ingress thread of a gateway run from source, started as a file (SVC_TEST_INGRESS_THREAD): the worker
// `newThread` evaluates by default runs no `--import` preload, which a test injecting a bug needs.
import { register } from "tsx/esm/api";

register();
await import("../../src/io/http/uwsThread.ts");
