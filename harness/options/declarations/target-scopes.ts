/** The experiment's target scopes: the targets that accept an option, and what the others say. */
import type { TargetScope } from './types.js';

export const LOCAL_RUNTIME: TargetScope = {
  only: ['embedded'],
  refusal: (target) =>
    `is injected by the local Lambda runtime, so it applies to --target embedded only; on ${target} the ` +
    'event source mapping and DynamoDB are the real ones (--poison-rate and --producer-duplicate-rate work ' +
    'everywhere: the producer injects them)',
};

export const EMBEDDED_SETTING: TargetScope = {
  only: ['embedded'],
  refusal: () =>
    'applies to --target embedded only; a deployed stack runs with the settings in contract/topology.ts it ' +
    'was deployed with (change them there and redeploy)',
};

export const PROVIDER_FAULT: TargetScope = {
  only: ['embedded'],
  refusal: () =>
    "is drawn by the charge modes' handlers, so on a deployed stack it is a deployment setting: deploy with " +
    '`npx cdk deploy -c providerLostResponseRate=R`',
};

export const DEPLOYED: TargetScope = {
  only: ['aws', 'localstack'],
  refusal: () => 'applies to --target aws or localstack, not embedded',
};

export const LOCALSTACK: TargetScope = {
  only: ['localstack'],
  refusal: (target) =>
    target === 'aws'
      ? 'applies to --target localstack; --target aws always talks to AWS'
      : `applies to --target localstack, not ${target}`,
};
