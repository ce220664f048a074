import { App, Errors, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import {
  deploymentSettingsFromContext,
  InvalidSettingError,
  SQS_POLLER_RANGES,
} from '../contract/deployment-settings.js';
import { DEFAULT_STACK_NAME } from '../contract/stack-outputs.js';
import { DeliverySemanticsStack } from './delivery-semantics-stack.js';

const app = new App();
const stackName = String(app.node.tryGetContext('stackName') ?? DEFAULT_STACK_NAME);

// cdk-nag's AWS Solutions rules run on every synth and deploy: a violation fails it.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));

try {
  new DeliverySemanticsStack(app, stackName, {
    settings: deploymentSettingsFromContext((key) => app.node.tryGetContext(key)),
    description:
      'SQS → Lambda → DynamoDB consumers: at-most-once, at-least-once and effectively-once under crashes',
    env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  });
} catch (error) {
  // A wrong `-c` value says what to pass, in one line: no stack trace.
  const refused = refusal(error);
  if (refused === undefined) throw error;
  process.stderr.write(`error: ${refused}\n`);
  process.exit(1);
}

function refusal(error: unknown): string | undefined {
  if (error instanceof InvalidSettingError) return error.message;
  // aws-cdk-lib's SqsEventSource checks the pollers' ranges itself: its refusal names the context.
  const pollers = app.node.tryGetContext('provisionedPollers');
  if (
    pollers !== undefined &&
    Errors.isValidationError(error) &&
    /provisioned pollers/i.test(error.message)
  ) {
    return `context provisionedPollers=${pollers} is refused by aws-cdk-lib: ${error.message} (${SQS_POLLER_RANGES})`;
  }
  return undefined;
}
