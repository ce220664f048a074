/** A duration as every line of the report prints it: `12.3 s`. */
export const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
