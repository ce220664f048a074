/**
 * Where a LocalStack run goes unless told otherwise. Its own module, so that the options' help can
 * name them without loading the deployed environment's SDK clients.
 */
export const LOCALSTACK_DEFAULTS = {
  // 127.0.0.1, not localhost: the compose file publishes the port on IPv4 only, and localhost may resolve to ::1.
  endpoint: 'http://127.0.0.1:4566',
  region: 'us-east-1',
  // LocalStack accepts any credentials; these are its documented defaults.
  credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
} as const;
