import { existsSync } from 'node:fs';
import { connect } from 'node:net';

/** Where the real PostgreSQL, NATS and Redis of a test run are. */
export interface TestInfra {
  databaseUrl: string;
  natsUrl: string;
  redisUrl: string;
}

function reachable(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({ host, port });
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(timeoutMs, () => done(false));
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
  });
}

let cached: Promise<TestInfra> | undefined;

/**
 * Resolves the servers for integration tests, in this order:
 * 1. `DATABASE_URL`, `NATS_URL`, `REDIS_URL` from the environment;
 * 2. the conventional local servers (127.0.0.1:5432, :4222, :6379) when they answer;
 * 3. containers started with testcontainers, when a container runtime answers.
 * Otherwise it fails loudly: integration tests never skip silently.
 */
export function testInfra(): Promise<TestInfra> {
  cached ??= resolveInfra();
  return cached;
}

async function resolveInfra(): Promise<TestInfra> {
  const env = process.env;
  const local = {
    databaseUrl: 'postgresql://postgres@127.0.0.1:5432/postgres',
    natsUrl: 'nats://127.0.0.1:4222',
    redisUrl: 'redis://127.0.0.1:6379',
  };
  const [pg, nats, redis] = await Promise.all([
    env.DATABASE_URL ? true : reachable('127.0.0.1', 5432),
    env.NATS_URL ? true : reachable('127.0.0.1', 4222),
    env.REDIS_URL ? true : reachable('127.0.0.1', 6379),
  ]);
  if (pg && nats && redis) {
    return {
      databaseUrl: env.DATABASE_URL ?? local.databaseUrl,
      natsUrl: env.NATS_URL ?? local.natsUrl,
      redisUrl: env.REDIS_URL ?? local.redisUrl,
    };
  }
  if (existsSync('/var/run/docker.sock') || env.DOCKER_HOST) {
    return startContainers();
  }
  const missing = [!pg && 'PostgreSQL (DATABASE_URL)', !nats && 'NATS (NATS_URL)', !redis && 'Redis (REDIS_URL)'].filter(Boolean);
  throw new Error(
    `Integration tests need real servers, and none answered for: ${missing.join(', ')}. ` +
      'Set the URLs, start the local servers (see .ci/run), or provide a container runtime.',
  );
}

async function startContainers(): Promise<TestInfra> {
  const { GenericContainer } = await import('testcontainers');
  const [pg, nats, redis] = await Promise.all([
    new GenericContainer('postgres:16-alpine')
      .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust' })
      .withExposedPorts(5432)
      .start(),
    new GenericContainer('nats:2.10-alpine').withCommand(['-js']).withExposedPorts(4222).start(),
    new GenericContainer('redis:7-alpine').withExposedPorts(6379).start(),
  ]);
  return {
    databaseUrl: `postgresql://postgres@${pg.getHost()}:${pg.getMappedPort(5432)}/postgres`,
    natsUrl: `nats://${nats.getHost()}:${nats.getMappedPort(4222)}`,
    redisUrl: `redis://${redis.getHost()}:${redis.getMappedPort(6379)}`,
  };
}
