import { describe, expect, it } from 'vitest';
import { maxMemoryUsedKb } from '../../../../harness/environments/deployed.js';
import {
  CredentialsError,
  EndpointUnreachableError,
  explainAwsError,
  StackNotFoundError,
} from '../../../../harness/environments/deployed-errors.js';

const aws = { target: 'aws', stackName: 'DeliverySemantics', region: 'eu-west-1' } as const;
const named = (name: string, message = 'x') => Object.assign(new Error(message), { name });

describe('explaining AWS failures', () => {
  it.each([
    'CredentialsProviderError',
    'ExpiredTokenException',
    'InvalidClientTokenId',
    'UnrecognizedClientException',
  ])('turns %s into a credentials error that says what to configure', (name) => {
    const explained = explainAwsError(named(name), aws);
    expect(explained).toBeInstanceOf(CredentialsError);
    expect((explained as Error).message).toMatch(/aws configure|aws sso login/);
  });

  it('turns a missing stack into how to deploy it', () => {
    const explained = explainAwsError(
      named('ValidationError', 'Stack with id DeliverySemantics does not exist'),
      aws,
    );
    expect(explained).toBeInstanceOf(StackNotFoundError);
    expect((explained as Error).message).toContain('npx cdk deploy -c stackName=DeliverySemantics');
  });

  it('turns a refused LocalStack connection into how to start it', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:4566'), { code: 'ECONNREFUSED' });
    const explained = explainAwsError(refused, {
      ...aws,
      target: 'localstack',
      endpoint: 'http://localhost:4566',
    });
    expect(explained).toBeInstanceOf(EndpointUnreachableError);
    expect((explained as Error).message).toContain('npm run localstack:up');
  });

  it('asks for a region when none is configured', () => {
    expect(explainAwsError(new Error('Region is missing'), aws)).toBeInstanceOf(CredentialsError);
  });

  it('leaves unknown failures alone', () => {
    const other = named('ServiceUnavailable');
    expect(explainAwsError(other, aws)).toBe(other);
  });
});

describe('verifier memory from the Lambda REPORT line', () => {
  it('reads Max Memory Used from the base64 tail log', () => {
    const log = Buffer.from('REPORT RequestId: 1\tDuration: 10 ms\tMax Memory Used: 91 MB\t').toString(
      'base64',
    );
    expect(maxMemoryUsedKb(log)).toBe(91 * 1024);
    expect(maxMemoryUsedKb(undefined)).toBeUndefined();
  });
});
