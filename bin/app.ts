import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { deploymentSettingsFromContext } from '../contract/deployment-settings.js';
import { DEFAULT_STACK_NAME } from '../contract/stack-outputs.js';
import { DeliverySemanticsStack } from '../lib/delivery-semantics-stack.js';

const app = new App();
const settings = deploymentSettingsFromContext((key) => app.node.tryGetContext(key));
const stackName = String(app.node.tryGetContext('stackName') ?? DEFAULT_STACK_NAME);

// cdk-nag's AWS Solutions rules run on every synth and deploy: a violation fails it.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));

new DeliverySemanticsStack(app, stackName, {
  settings,
  description:
    'SQS → Lambda → DynamoDB consumers: at-most-once, at-least-once and effectively-once under crashes',
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
