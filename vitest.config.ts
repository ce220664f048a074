import { defineConfig } from 'vitest/config';

// Handlers read their configuration at module scope (fail fast at cold start), so unit tests
// provide a complete, valid environment before any handler module is imported.
const handlerEnv = {
  TABLE_NAME: 'ledger-test',
  IDEMPOTENCY_TABLE_NAME: 'idempotency-test',
  QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/at-most-once',
  CRASH_RATE: '0',
  CRASH_SEED: 'unit',
  CRASH_AT: 'none',
  DEAD_LETTER_QUEUE_URLS: JSON.stringify({
    'at-most-once': 'https://sqs.eu-west-1.amazonaws.com/123456789012/at-most-once-dlq',
    'at-least-once': 'https://sqs.eu-west-1.amazonaws.com/123456789012/at-least-once-dlq',
    'effectively-once': 'https://sqs.eu-west-1.amazonaws.com/123456789012/effectively-once-dlq',
    'powertools-idempotency': 'https://sqs.eu-west-1.amazonaws.com/123456789012/powertools-idempotency-dlq',
  }),
  AWS_REGION: 'eu-west-1',
  AWS_ACCESS_KEY_ID: 'unit',
  AWS_SECRET_ACCESS_KEY: 'unit',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
};

// Node 20 is what these machines run; the deployed functions run Node 22. The SDK's notice about
// its future Node 22 floor is known and would only bury test output.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

export default defineConfig({
  test: {
    projects: [
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'], env: handlerEnv } },
      { test: { name: 'infra', include: ['test/infra/**/*.test.ts'], testTimeout: 120_000 } },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          testTimeout: 240_000,
          hookTimeout: 120_000,
          // Emulators and child processes are heavy on 2 cores: one integration file at a time.
          fileParallelism: false,
        },
      },
    ],
  },
});
