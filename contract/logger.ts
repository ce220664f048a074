import { Logger } from '@aws-lambda-powertools/logger';

/** Every function's logger (the modes, the verifier, the services): structured JSON, Powertools'. */
export function createLogger(serviceName: string, persistentKeys: Record<string, string> = {}): Logger {
  return new Logger({ serviceName, persistentKeys });
}
