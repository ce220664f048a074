/**
 * Module resolution hooks for `npm run explore -- --core DIR` (Node's module.register): every
 * module under packages/consumer-cores/src/ resolves to the file of the same name in the copy of DIR the
 * explorer made inside this project (so its packages and its module type are this project's), and
 * the lab's modes run the team's cores unchanged around them (the harness keeps its own). Plain JavaScript: hooks run on a
 * thread of their own.
 */
let from;
let to;
let harness;

export function initialize(data) {
  from = data.from;
  to = data.to;
  harness = data.harness;
}

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  // The explorer's own imports (its mapping's delete) stay this project's: only the lab's modes,
  // and the cores themselves, take the team's files.
  if (!resolved.url.startsWith(from) || context.parentURL?.startsWith(harness)) return resolved;
  return { ...resolved, url: to + resolved.url.slice(from.length), shortCircuit: true };
}
