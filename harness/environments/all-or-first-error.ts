// A Promise.all for steps started side by side: it throws only once none of them still runs.

/** Like Promise.all, but waits for every promise to settle first, so nothing still runs when it throws. */
export async function allOrFirstError<T extends readonly unknown[]>(
  promises: { readonly [K in keyof T]: Promise<T[K]> },
): Promise<T> {
  const settled = await Promise.allSettled(promises);
  const failed = settled.find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((result) => (result as PromiseFulfilledResult<unknown>).value) as unknown as T;
}
