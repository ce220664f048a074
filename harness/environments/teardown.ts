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
