/**
 * The globals the folder uses, typed here so that it compiles without @types/node or the DOM
 * library (and beside either): every Lambda runtime (Node 20 and later) has them all.
 */
const host = globalThis as unknown as {
  readonly console: {
    log(line: string): void;
    warn(line: string): void;
    error(line: string): void;
  };
  setTimeout(callback: () => void, ms: number): unknown;
  readonly crypto: {
    readonly subtle: { digest(algorithm: 'SHA-256', data: Uint8Array): Promise<ArrayBuffer> };
  };
  readonly TextEncoder: new () => { encode(text: string): Uint8Array };
};

export const consoleOut = host.console;

export const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => {
    host.setTimeout(resolve, ms);
  });

/** The text as UTF-8 bytes, as DynamoDB sizes it. */
export const utf8 = (text: string): Uint8Array => new host.TextEncoder().encode(text);

/** SHA-256 of the text, in hex (Web Crypto: no Node API, no dependency). */
export async function sha256Hex(text: string): Promise<string> {
  const digest = new Uint8Array(await host.crypto.subtle.digest('SHA-256', utf8(text)));
  return [...digest].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}
