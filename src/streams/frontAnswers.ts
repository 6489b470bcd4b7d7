import { errorOutcome, unavailableOutcome } from "./types.js";

/**
 * Answers the HTTP front gives on its own as well as the pipeline, kept apart from the stages so that an
 * ingress thread, which imports them, loads none of the pipeline (its schemas and operators: about a
 * megabyte of code per thread start).
 */
export const UNKNOWN_ROUTE = errorOutcome(404, "Unknown route");

export const SHUTTING_DOWN = unavailableOutcome("Shutting down");
