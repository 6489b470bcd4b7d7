import type { Plugin } from "esbuild";

export declare const zodEnglishOnly: Plugin;
