import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { type IncomingHttpHeaders } from 'node:http';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configureLogging } from '@ziti/log';
import { createTestDatabase, testInfra, type TestDatabase } from '@ziti/test-kit';
import { type RunningController, startController } from './controller.js';

/**
 * The controller's structured log on the real servers, with every context reached over loopback
 * HTTP and gRPC (ZITI_IN_PROCESS=off, as separate processes would be): one access line per public
 * request with the id its answer carried, and that id in the lines of the contexts it reached.
 */

type Record_ = Record<string, any>;
type Answer = { status: number; headers: IncomingHttpHeaders; body: any };

const ADMIN_PASSWORD = 'logs-test-Admin-password-1';
const lines: Record_[] = [];
let db: TestDatabase;
let dataDir: string;
let ctrl: RunningController;

function call(method: string, path: string, headers: Record<string, string> = {}, body?: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`https://127.0.0.1:${ctrl.port}${path}`, { method, ca: ctrl.caCertPem, headers: body ? { ...headers, 'content-type': 'application/json' } : headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end(body ? JSON.stringify(body) : undefined);
  });
}

const accessLines = (requestId: string) => lines.filter((l) => l.context === 'gateway' && l.msg === 'request finished' && l.requestId === requestId);

/** Waits for the access line of a request (written when its response closes, just after the client has it). */
async function accessLineOf(requestId: string): Promise<Record_[]> {
  const deadline = Date.now() + 5_000;
  while (accessLines(requestId).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  return accessLines(requestId);
}

beforeAll(async () => {
  const infra = await testInfra();
  db = await createTestDatabase(infra.databaseUrl);
  dataDir = mkdtempSync(join(tmpdir(), 'ziti-logs-'));
  process.env.ZITI_IN_PROCESS = 'off';
  ctrl = await startController({
    dataDir,
    databaseUrl: db.url,
    natsUrl: infra.natsUrl,
    redisUrl: infra.redisUrl,
    listenHost: '127.0.0.1',
    port: 0, routerCtrlPort: 0,
    adminPassword: ADMIN_PASSWORD,
    internalSecret: 'logs-test-internal-secret',
    logging: { level: 'debug', format: 'json', destination: { write: (l: string) => lines.push(JSON.parse(l)) } },
  });
}, 120_000);

afterAll(async () => {
  await ctrl?.stop();
  delete process.env.ZITI_IN_PROCESS;
  configureLogging({ destination: { write: () => undefined } });
  await db?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('controller logs', () => {
  it('writes every line as JSON with level, time, context and msg', () => {
    expect(lines.length).toBeGreaterThan(0);
    for (const l of lines) {
      expect(typeof l.level).toBe('string');
      expect(l.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(typeof l.context).toBe('string');
    }
    expect(lines.some((l) => l.context === 'controller')).toBe(true);
    for (const context of ['identity-auth', 'pki-enrollment', 'policy', 'session', 'posture', 'gateway']) expect(lines.some((l) => l.context === context)).toBe(true);
  });

  it('logs one access line for a 2xx answer, with the id of its x-request-id header and the path without its query', async () => {
    const res = await call('GET', '/edge/client/v1/version?probe=query-value-1');
    expect(res.status).toBe(200);
    const requestId = String(res.headers['x-request-id']);
    expect(requestId).toMatch(/^[0-9A-Za-z][0-9A-Za-z.-]{8}$/);
    const access = await accessLineOf(requestId);
    expect(access).toHaveLength(1);
    expect(access[0]).toMatchObject({ level: 'info', method: 'GET', path: '/edge/client/v1/version', operationId: 'listVersion', status: 200, api: 'client' });
    expect(typeof access[0]!.latencyMs).toBe('number');
    expect(JSON.stringify(lines)).not.toContain('query-value-1');
  });

  it('logs one access line for an error with the id of error.requestId, and the id reaches identity-auth over gRPC', async () => {
    const token = randomUUID();
    const res = await call('GET', '/edge/client/v1/current-api-session', { 'zt-session': token });
    expect(res.status).toBe(401);
    const requestId = res.body.error.requestId as string;
    expect(res.headers['x-request-id']).toBe(requestId);
    const access = await accessLineOf(requestId);
    expect(access).toHaveLength(1);
    expect(access[0]).toMatchObject({ level: 'info', method: 'GET', status: 401, operationId: 'getCurrentAPISession', api: 'client' });
    expect(access[0]).not.toHaveProperty('identityId');
    // The gateway asked identity-auth about the token over gRPC: the callee logged the call under the caller's request id.
    expect(lines.filter((l) => l.context === 'identity-auth' && l.msg === 'grpc call handled' && l.requestId === requestId).length).toBeGreaterThan(0);
    expect(JSON.stringify(lines)).not.toContain(token);
  });

  it('carries the request id and the caller into the proxied context, and names the caller on the access line', async () => {
    const login = await call('POST', '/edge/management/v1/authenticate?method=password', {}, { username: 'admin', password: ADMIN_PASSWORD });
    expect(login.status).toBe(200);
    const token = login.body.data.token as string;
    const loginId = String(login.headers['x-request-id']);
    const loginAccess = await accessLineOf(loginId);
    expect(loginAccess).toHaveLength(1);
    expect(loginAccess[0]).toMatchObject({ status: 200, operationId: 'authenticate', api: 'management' });
    // identity-auth served it behind the gateway (over loopback HTTP) under the same id, at debug level.
    expect(lines.find((l) => l.context === 'identity-auth' && l.msg === 'request finished' && l.requestId === loginId)).toMatchObject({ level: 'debug', status: 200 });

    const list = await call('GET', '/edge/management/v1/identities', { 'zt-session': token });
    expect(list.status).toBe(200);
    const listId = String(list.headers['x-request-id']);
    const listAccess = await accessLineOf(listId);
    expect(listAccess).toHaveLength(1);
    expect(listAccess[0]).toMatchObject({ status: 200, operationId: 'listIdentities', identityId: login.body.data.identity.id });
    const text = JSON.stringify(lines);
    expect(text).not.toContain(ADMIN_PASSWORD);
    expect(text).not.toContain(token);
  });
});
