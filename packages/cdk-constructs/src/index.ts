export { grantWriteOwnPartitions, type OwnPartitionsOptions } from './grant-own-partitions.js';
export {
  type FindLocalEsbuildOptions,
  findLocalEsbuild,
  type LocalEsbuild,
  type LocalEsbuildCheck,
  missingLocalEsbuild,
} from './local-esbuild.js';
export { type FunctionPackaging, LoggedFunction, type LoggedFunctionProps } from './logged-function.js';
export { type ProvisionedPollers, SqsConsumer, type SqsConsumerProps } from './sqs-consumer.js';
