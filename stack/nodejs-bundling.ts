import { join } from 'node:path';
import type { FunctionPackaging } from '@sqs-delivery-semantics/cdk-constructs';
import { type BundlingOptions, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { BUNDLING, PROJECT_ROOT } from './bundling.js';

/**
 * BUNDLING as NodejsFunction takes it, for every function of the stack and its constructs: local
 * esbuild, never Docker. Apart from stack/bundling.ts, which the local runtime imports without CDK.
 */
export const NODEJS_BUNDLING: BundlingOptions = {
  format: BUNDLING.format === 'esm' ? OutputFormat.ESM : OutputFormat.CJS,
  target: BUNDLING.target,
  minify: BUNDLING.minify,
  sourceMap: BUNDLING.sourcemap,
  mainFields: [...BUNDLING.mainFields],
  banner: BUNDLING.banner,
  externalModules: BUNDLING.externalModules,
  forceDockerBundling: false,
  esbuildArgs: { '--conditions': BUNDLING.conditions.join(',') },
};

/** How every function of this stack is packaged: this project's esbuild options, root and lockfile. */
export const LAB_PACKAGING: FunctionPackaging = {
  bundling: NODEJS_BUNDLING,
  projectRoot: PROJECT_ROOT,
  depsLockFilePath: join(PROJECT_ROOT, 'package-lock.json'),
};
