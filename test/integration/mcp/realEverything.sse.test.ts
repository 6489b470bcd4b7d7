import { everythingSuite } from "./everythingSuite.js";

everythingSuite("sse");
