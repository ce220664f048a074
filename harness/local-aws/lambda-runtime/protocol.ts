/** Messages between the local Lambda service (parent) and an execution environment (child process). */

export interface InvokeMessage {
  readonly type: 'invoke';
  readonly requestId: string;
  readonly event: unknown;
  /** Epoch ms at which the invocation times out; the context's getRemainingTimeInMillis counts down to it. */
  readonly deadline: number;
  /** An injected slow consumer: the environment waits this long before it calls the handler. */
  readonly workDelayMs?: number;
}

export type EnvironmentMessage =
  | { readonly type: 'ready'; readonly initMs: number }
  | { readonly type: 'init-error'; readonly error: SerializedError }
  | {
      readonly type: 'result';
      readonly requestId: string;
      readonly ok: true;
      readonly response: unknown;
      readonly maxRssKb: number;
    }
  | {
      readonly type: 'result';
      readonly requestId: string;
      readonly ok: false;
      readonly error: SerializedError;
      readonly maxRssKb: number;
    };

export interface SerializedError {
  readonly name: string;
  readonly message: string;
  readonly stack?: string;
}

export function serializeError(error: unknown): SerializedError {
  if (error instanceof Error) {
    return { name: error.name, message: error.message, ...(error.stack ? { stack: error.stack } : {}) };
  }
  return { name: 'NonError', message: String(error) };
}
