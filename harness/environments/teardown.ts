/**
 * What a start registered to undo, undone one step at a time, last first, whatever fails along
 * the way; running it twice waits for the first run.
 */
export class Teardown {
  private readonly steps: Array<() => Promise<void>> = [];
  private running: Promise<void> | undefined;

  constructor(private readonly failureMessage: string) {}

  add(step: () => Promise<void>): void {
    this.steps.push(step);
  }

  /**
   * Registers something still starting: once it has started it is stopped like any other step; if
   * it fails to start there is nothing to undo (and its rejection is not left unhandled meanwhile).
   * Returns the same promise.
   */
  whenStarted<T extends { stop(): Promise<void> }>(starting: Promise<T>): Promise<T> {
    const started = starting.then(
      (value) => value,
      () => undefined,
    );
    this.add(async () => {
      await (await started)?.stop();
    });
    return starting;
  }

  run(): Promise<void> {
    this.running ??= (async () => {
      const failures: unknown[] = [];
      for (let step = this.steps.pop(); step; step = this.steps.pop()) {
        await step().catch((error: unknown) => failures.push(error));
      }
      if (failures.length > 0) throw new AggregateError(failures, this.failureMessage);
    })();
    return this.running;
  }
}
