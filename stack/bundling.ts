import { fileURLToPath } from 'node:url';

/**
 * The export condition under which this repository's own packages (packages/*) resolve to their
 * TypeScript sources, so nothing is built before a run or a synth. Set in every resolver: .npmrc's
 * node-options (Node and tsx under npm), tsconfig's customConditions, Vitest's resolve conditions
 * and esbuild's (BUNDLING.conditions). A team installing the packages never sets it, and gets dist/.
 */
export const SOURCE_CONDITION = '@sqs-delivery-semantics/source';

/**
 * How a handler is bundled, shared by the stack (NodejsFunction, local esbuild, never Docker) and
 * the local runtime, so both run the same code built the same way.
 *
 * ESM output, because the project is ESM. The banner restores `require` for the few CommonJS
 * dependencies that call it on Node built-ins. The AWS SDK is bundled rather than taken from the
 * runtime, so the deployed code runs exactly the SDK version in package-lock.json.
 */
export const BUNDLING = {
  format: 'esm',
  /** Matches the runtime the stack pins (nodejs24.x); the local runtime builds for the local Node instead. */
  target: 'node24',
  platform: 'node',
  minify: true,
  sourcemap: true,
  mainFields: ['module', 'main'],
  /** esbuild drops its implicit `module` condition once any is given: kept, so third-party packages resolve as before. */
  conditions: [SOURCE_CONDITION, 'module'],
  banner:
    "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  externalModules: [] as string[],
} as const;

export const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Each function's entry file, by its bundle's name: a mode's is `modes/<mode>.ts`; the others are named here. */
const ENTRIES: Readonly<Record<string, string>> = {
  verifier: 'verifier/verifier.ts',
  'payment-provider/handler': 'services/payment-provider/handler.ts',
  'outbox-relay': 'services/outbox/relay.ts',
};

/** The entry file of a handler, by its bundle's name. */
export const handlerEntry = (name: string): string => `${PROJECT_ROOT}${ENTRIES[name] ?? `modes/${name}.ts`}`;
