/**
 * `npm run build`: bundles every handler into dist/functions/ exactly as the stack deploys it
 * (stack/bundling.ts, for the Lambda runtime's Node), and prints the sizes, so the artifact can be inspected without `cdk synth`.
 */
import { statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { MODE_NAMES } from '../../contract/topology.js';
import { BUNDLING, PROJECT_ROOT } from '../../stack/bundling.js';
import { bundleHandlers } from '../local-aws/bundling/bundle.js';

const outdir = join(PROJECT_ROOT, 'dist', 'functions');
const bundles = await bundleHandlers([...MODE_NAMES, 'verifier'], { outdir, target: BUNDLING.target });
const width = Math.max(...Object.keys(bundles.handlers).map((name) => name.length));
for (const [name, path] of Object.entries(bundles.handlers)) {
  const kb = (statSync(path).size / 1024).toFixed(0);
  process.stdout.write(`${name.padEnd(width)}  ${relative(process.cwd(), path)}  ${kb} KiB\n`);
}
