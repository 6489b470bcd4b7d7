import type { Plugin } from "esbuild";

export declare const rxjsModules: Plugin;
