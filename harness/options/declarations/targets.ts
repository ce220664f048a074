/** Where a run is: --target and a deployed stack's name, region and endpoint (experiment and redrive). */
import { DEFAULT_STACK_NAME } from '../../../contract/stack-outputs.js';
import { LOCALSTACK_DEFAULTS } from '../../environments/localstack-defaults.js';
import { DEPLOYED, LOCALSTACK } from './target-scopes.js';
import { type OptionDeclaration, TARGETS } from './types.js';

export const TARGET_OPTIONS = {
  target: {
    kind: 'choice',
    choices: TARGETS,
    placeholder: 'T',
    group: 'target',
    help:
      'where the consumers run. embedded: everything on this machine: fauxqs for SQS, DynamoDB Local (needs ' +
      'Java 17+), the real handler bundles in child processes behind a local Lambda SQS event source mapping. ' +
      'aws: a stack deployed with `npx cdk deploy` to an AWS account, with your AWS credentials (profile, SSO ' +
      'or env) and region. localstack: a stack deployed to LocalStack with `npm run deploy:local` (see ' +
      'localstack/README.md)',
    entryPoints: {
      experiment: { default: 'embedded' },
      redrive: {
        default: 'aws',
        help:
          'where the run was made: aws or localstack. An embedded run cannot be redriven afterwards: its ' +
          'queues and ledger are gone when it ends (use `npm run experiment -- --redrive`)',
      },
    },
  },
  stack: {
    kind: 'text',
    pattern: /^[A-Za-z][A-Za-z0-9-]{0,127}$/,
    shape: 'a CloudFormation stack name (letters, digits, -)',
    placeholder: 'NAME',
    group: 'deployed',
    targets: DEPLOYED,
    help: 'CloudFormation stack name',
    entryPoints: { experiment: { default: DEFAULT_STACK_NAME }, redrive: { default: DEFAULT_STACK_NAME } },
  },
  region: {
    kind: 'text',
    pattern: /^[a-z]{2,4}(-[a-z]+)+-\d+$/,
    shape: 'an AWS region like eu-west-1',
    placeholder: 'REGION',
    group: 'deployed',
    targets: DEPLOYED,
    help: 'AWS region',
    entryPoints: {
      experiment: {
        defaultText: `AWS_REGION or your profile's; ${LOCALSTACK_DEFAULTS.region} for localstack`,
      },
      redrive: {
        defaultText: `AWS_REGION or your profile's; ${LOCALSTACK_DEFAULTS.region} for localstack`,
      },
    },
  },
  endpoint: {
    kind: 'text',
    pattern: /^https?:\/\/[^\s/]+/,
    shape: 'a URL like http://localhost:4566',
    placeholder: 'URL',
    group: 'deployed',
    targets: LOCALSTACK,
    help: 'LocalStack endpoint',
    entryPoints: {
      experiment: { defaultText: LOCALSTACK_DEFAULTS.endpoint },
      redrive: { defaultText: LOCALSTACK_DEFAULTS.endpoint },
    },
  },
} as const satisfies Record<string, OptionDeclaration>;
