import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

/**
 * localstack/docker-compose.yml is run on laptops, not here (no Docker engine in CI), so its
 * structure is what can be checked: the properties the README and the experiment driver rely on.
 */
const file = new URL('../../localstack/docker-compose.yml', import.meta.url);
const compose: unknown = parse(readFileSync(file, 'utf8'));

type Dict = Record<string, unknown>;

const isDict = (value: unknown): value is Dict =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function dict(value: unknown, what: string): Dict {
  if (!isDict(value)) throw new Error(`${what} is not a mapping`);
  return value;
}

function strings(value: unknown, what: string): string[] {
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
    throw new Error(`${what} is not a list of strings`);
  }
  return value;
}

/** `environment` may be a list of KEY=value or a mapping; both mean the same to Compose. */
function environment(service: Dict): Map<string, string> {
  const env = service.environment;
  const entries = new Map<string, string>();
  if (Array.isArray(env)) {
    for (const item of strings(env, 'environment')) {
      const eq = item.indexOf('=');
      entries.set(eq < 0 ? item : item.slice(0, eq), eq < 0 ? '' : item.slice(eq + 1));
    }
  } else {
    for (const [key, value] of Object.entries(dict(env, 'environment')))
      entries.set(key, String(value ?? ''));
  }
  return entries;
}

/** The value Compose uses when the variable is unset: `${VAR:-default}` → default; a literal → itself. */
function defaultOf(value: string): string {
  const interpolated = /^\$\{[A-Z_][A-Z0-9_]*:?-(.*)\}$/.exec(value);
  return interpolated ? (interpolated[1] ?? '') : value;
}

const services = dict(dict(compose, 'the compose file').services, 'services');
const [serviceName] = Object.keys(services);
const service = dict(services[serviceName ?? ''], `service ${serviceName}`);

describe('localstack/docker-compose.yml', () => {
  it('defines exactly one service, LocalStack', () => {
    expect(Object.keys(services)).toHaveLength(1);
    expect(service.image).toEqual(expect.stringMatching(/^localstack\/localstack:/));
  });

  it('pins the image to an explicit version, never latest or untagged', () => {
    const image = String(service.image);
    const tag = defaultOf(image.slice('localstack/localstack:'.length));
    // 4.14.0-style semantic versions or 2026.4 / 2026.04.0-style calendar versions.
    expect(tag).toMatch(/^\d+\.\d+(\.\d+)?$/);
    expect(tag).not.toBe('latest');
  });

  it('publishes the gateway port 4566 on loopback only', () => {
    const ports = strings(service.ports, 'ports');
    expect(ports).toContain('127.0.0.1:4566:4566');
    for (const port of ports) expect(port).toMatch(/^127\.0\.0\.1:/);
  });

  it('mounts the Docker socket so Lambda can start its execution-environment containers', () => {
    expect(strings(service.volumes, 'volumes')).toContain('/var/run/docker.sock:/var/run/docker.sock');
  });

  it('mounts a volume at /var/lib/localstack that the file declares', () => {
    const stateMount = strings(service.volumes, 'volumes').find((v) => v.endsWith(':/var/lib/localstack'));
    expect(stateMount).toBeDefined();
    const source = stateMount?.slice(0, -':/var/lib/localstack'.length) ?? '';
    const isPath = source.startsWith('.') || source.startsWith('/') || source.startsWith('$');
    if (!isPath) expect(Object.keys(dict(dict(compose, 'compose').volumes, 'volumes'))).toContain(source);
  });

  it('passes LOCALSTACK_AUTH_TOKEN through from the environment, never a literal token', () => {
    const token = environment(service).get('LOCALSTACK_AUTH_TOKEN');
    expect(token).toMatch(/^\$\{LOCALSTACK_AUTH_TOKEN(:?-)?\}$/);
  });

  it('keeps DEBUG off unless asked for, and runs the arm64 functions natively', () => {
    const env = environment(service);
    expect(defaultOf(env.get('DEBUG') ?? '0')).toBe('0');
    expect(env.get('LAMBDA_IGNORE_ARCHITECTURE')).toBe('1');
  });

  it('has a healthcheck on the documented /_localstack/health endpoint', () => {
    const healthcheck = dict(service.healthcheck, 'healthcheck');
    const test = healthcheck.test;
    const command = Array.isArray(test) ? test.join(' ') : String(test);
    expect(command).toContain('http://localhost:4566/_localstack/health');
  });
});
