import { everythingSuite } from "./everythingSuite.js";

everythingSuite("streamableHttp");
