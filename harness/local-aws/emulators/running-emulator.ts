/** A local stand-in for an AWS service: where to send requests, and how to shut it down. */
export interface RunningEmulator {
  readonly endpoint: string;
  /** Idempotent; resolves once the emulator no longer holds its port or process. */
  stop(): Promise<void>;
}
