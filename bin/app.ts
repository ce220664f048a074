import { App } from 'aws-cdk-lib';
import { DeliverySemanticsStack } from '../lib/delivery-semantics-stack.js';
import { deploymentSettingsFromContext } from '../lib/deployment-settings.js';

const app = new App();
const settings = deploymentSettingsFromContext((key) => app.node.tryGetContext(key));
const stackName = String(app.node.tryGetContext('stackName') ?? 'DeliverySemantics');

new DeliverySemanticsStack(app, stackName, {
  settings,
  description:
    'SQS → Lambda → DynamoDB consumers: at-most-once, at-least-once and effectively-once under crashes',
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
