/**
 * Module resolution hooks for `npm run explore -- --core DIR` (Node's module.register): every
 * module under functions/core/ resolves to the file of the same name in DIR, so the lab's modes run
 * the team's cores unchanged around them. Packages a file in DIR imports resolve from this project
 * (DIR needs no node_modules of its own). Plain JavaScript: hooks run on a thread of their own.
 */
let from;
let to;
let anchor;

export function initialize(data) {
  from = data.from;
  to = data.to;
  anchor = data.anchor;
}

const isBare = (specifier) => !/^(\.|\/|file:|node:|data:)/.test(specifier);

export async function resolve(specifier, context, nextResolve) {
  if (context.parentURL?.startsWith(to) && isBare(specifier)) {
    return nextResolve(specifier, { ...context, parentURL: anchor });
  }
  const resolved = await nextResolve(specifier, context);
  if (!resolved.url.startsWith(from)) return resolved;
  return { ...resolved, url: to + resolved.url.slice(from.length), shortCircuit: true };
}
