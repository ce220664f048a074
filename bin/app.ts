import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { deploymentSettingsFromContext, InvalidSettingError } from '../contract/deployment-settings.js';
import { DEFAULT_STACK_NAME } from '../contract/stack-outputs.js';
import { DeliverySemanticsStack } from '../lib/delivery-semantics-stack.js';

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
  if (!(error instanceof InvalidSettingError)) throw error;
  process.stderr.write(`error: ${error.message}\n`);
  process.exit(1);
}
