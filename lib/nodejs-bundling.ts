import { type BundlingOptions, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { BUNDLING } from './bundling.js';

/**
 * BUNDLING as NodejsFunction takes it, for every function of the stack and its constructs: local
 * esbuild, never Docker. Apart from lib/bundling.ts, which the local runtime imports without CDK.
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
};
