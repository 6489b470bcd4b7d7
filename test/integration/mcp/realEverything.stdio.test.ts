import { everythingSuite } from "./everythingSuite.js";

everythingSuite("stdio");
