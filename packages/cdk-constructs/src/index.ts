export { type FunctionPackaging, LoggedFunction, type LoggedFunctionProps } from './logged-function.js';
export { type ProvisionedPollers, SqsConsumer, type SqsConsumerProps } from './sqs-consumer.js';
