/**
 * The two globals the folder uses, typed here so that it compiles without @types/node or the DOM
 * library (and beside either): every Lambda runtime has both.
 */
const host = globalThis as unknown as {
  readonly console: {
    log(line: string): void;
    warn(line: string): void;
    error(line: string): void;
  };
  setTimeout(callback: () => void, ms: number): unknown;
};

export const consoleOut = host.console;

export const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => {
    host.setTimeout(resolve, ms);
  });
