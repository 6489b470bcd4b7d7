/** One step of the gateway's stop: run in the listed order, each awaited before the next. */
export interface StopStep {
  readonly name: string;
  run(): void | Promise<void>;
}

/** Runs the steps in order; a step that returns nothing does not yield to the event loop. */
export async function runStopSteps(steps: readonly StopStep[]): Promise<void> {
  for (const step of steps) {
    const done = step.run();
    if (done !== undefined) await done;
  }
}
