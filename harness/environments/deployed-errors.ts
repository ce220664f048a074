/** Why a deployed environment cannot be used; each says what to do, so the CLI never prints a stack trace. */

export class DeployedEnvironmentError extends Error {
  override readonly name: string = 'DeployedEnvironmentError';
}

export class CredentialsError extends DeployedEnvironmentError {
  override readonly name = 'CredentialsError';
}

export class StackNotFoundError extends DeployedEnvironmentError {
  override readonly name = 'StackNotFoundError';
}

export class StackVersionError extends DeployedEnvironmentError {
  override readonly name = 'StackVersionError';
}

export class EndpointUnreachableError extends DeployedEnvironmentError {
  override readonly name = 'EndpointUnreachableError';
}

/** The endpoint has no DLQ redrive (StartMessageMoveTask): --redrive is refused with what to do. */
export class RedriveUnsupportedError extends DeployedEnvironmentError {
  override readonly name = 'RedriveUnsupportedError';
}

export class VerifierInvocationError extends DeployedEnvironmentError {
  override readonly name = 'VerifierInvocationError';
}

const CREDENTIAL_ERRORS = new Set([
  'CredentialsProviderError',
  'ExpiredToken',
  'ExpiredTokenException',
  'InvalidClientTokenId',
  'UnrecognizedClientException',
  'SignatureDoesNotMatch',
  'AccessDenied',
  'AccessDeniedException',
]);

const CONNECTION_ERRORS = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNRESET', 'ETIMEDOUT']);

/**
 * Turns an SDK failure while talking to the deployment into an error that says what is wrong and
 * what to do. Unknown failures are returned unchanged.
 */
export function explainAwsError(
  error: unknown,
  context: {
    readonly target: 'aws' | 'localstack';
    readonly stackName: string;
    readonly region: string;
    readonly endpoint?: string;
  },
): unknown {
  if (!(error instanceof Error)) return error;
  const code = (error as { code?: string }).code ?? (error.cause as { code?: string } | undefined)?.code;
  if (
    context.target === 'localstack' &&
    (CONNECTION_ERRORS.has(code ?? '') || CONNECTION_ERRORS.has(error.name))
  ) {
    return new EndpointUnreachableError(
      `LocalStack is not reachable at ${context.endpoint}: start it with \`npm run localstack:up\` ` +
        '(see localstack/README.md), or pass --endpoint.',
    );
  }
  if (CONNECTION_ERRORS.has(code ?? '')) {
    return new EndpointUnreachableError(
      `cannot reach AWS in ${context.region} (${code}): check your network or --region.`,
    );
  }
  if (CREDENTIAL_ERRORS.has(error.name)) {
    return new CredentialsError(
      `AWS credentials are missing, expired or not allowed (${error.name}: ${error.message}). ` +
        'Configure them (`aws configure`, `aws sso login`, or AWS_PROFILE / AWS_ACCESS_KEY_ID) for the sandbox ' +
        'account the stack is deployed to, then run again.',
    );
  }
  if (error.message.includes('Region is missing')) {
    return new CredentialsError('no AWS region is configured: pass --region or set AWS_REGION.');
  }
  if (error.name === 'ValidationError' && /does not exist/.test(error.message)) {
    return new StackNotFoundError(
      `stack ${context.stackName} does not exist in ${context.region}. Deploy it first: ` +
        (context.target === 'localstack'
          ? '`npm run deploy:local`'
          : `\`npx cdk deploy -c stackName=${context.stackName}\``) +
        ', or pass the right --stack / --region.',
    );
  }
  return error;
}
