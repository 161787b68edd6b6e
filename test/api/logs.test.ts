import { randomUUID } from 'node:crypto';
import { BASE } from '../support/clients.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import type { HttpResponse } from '../support/http.js';

/**
 * The controller's structured log as a platform sees it: JSON lines with level, time, context and
 * msg; one access line per request on the public listener, with the request id the caller got
 * (`x-request-id`, and `error.requestId` of an error); no secret in any line.
 */

const ctl = useController();
failOnConformanceProblems();

type LogRecord = Record<string, unknown>;

const accessLines = (requestId: string) => ctl().logRecords().filter((r) => r.context === 'gateway' && r.msg === 'request finished' && r.requestId === requestId);

/** The access lines of a request, once its line is there (written as its response closes, just after the client has it). */
async function accessLinesOf(res: HttpResponse): Promise<LogRecord[]> {
  const requestId = String(res.headers['x-request-id']);
  const deadline = Date.now() + 5_000;
  while (accessLines(requestId).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  return accessLines(requestId);
}

describe('access log', () => {
  it('one line for a successful request, with the id of its x-request-id header and the path without its query', async () => {
    const res = await ctl().http.get(`${BASE.client}/version?probe=query-secret-1`);
    expect(res.status).toBe(200);
    expect(res.headers['x-request-id']).toMatch(/^[0-9A-Za-z][0-9A-Za-z.-]{8}$/);
    const lines = await accessLinesOf(res);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'info', method: 'GET', path: `${BASE.client}/version`, operationId: 'listVersion', status: 200, api: 'client' });
    expect(lines[0]!.latencyMs).toEqual(expect.any(Number));
    expect(ctl().logLines.join('')).not.toContain('query-secret-1');
  });

  it('one line for each error, with the id of error.requestId', async () => {
    const unknown = await ctl().http.get(`${BASE.management}/i-do-not-exist`);
    const anonymous = await ctl().http.get(`${BASE.management}/identities`);
    const badToken = await ctl().http.get(`${BASE.management}/identities`, randomUUID());
    for (const [res, status] of [[unknown, 404], [anonymous, 401], [badToken, 401]] as const) {
      expect(res.status).toBe(status);
      expect(res.headers['x-request-id']).toBe(res.body.error.requestId);
      const lines = await accessLinesOf(res);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ level: 'info', method: 'GET', status, api: 'management' });
      expect(lines[0]).not.toHaveProperty('identityId');
    }
    expect((await accessLinesOf(anonymous))[0]).toMatchObject({ operationId: 'listIdentities' });
    expect(await accessLinesOf(unknown)).toEqual([expect.not.objectContaining({ operationId: expect.anything() })]);
  });

  it('names the caller of an authenticated request, and no line holds a password or a session token', async () => {
    const { username, password } = ctl().admin;
    const login = await ctl().http.post(`${BASE.management}/authenticate?method=password`, { username, password });
    expect(login.status).toBe(200);
    const token = login.body.data.token as string;
    expect(await accessLinesOf(login)).toEqual([expect.objectContaining({ status: 200, operationId: 'authenticate' })]);
    const list = await ctl().http.get(`${BASE.management}/identities`, token);
    expect(list.status).toBe(200);
    expect(await accessLinesOf(list)).toEqual([expect.objectContaining({ status: 200, operationId: 'listIdentities', identityId: login.body.data.identity.id })]);
    const text = ctl().logLines.join('');
    expect(text).not.toContain(password);
    expect(text).not.toContain(token);
  });
});

describe('log lines', () => {
  it('are JSON objects with level (its name), an ISO-8601 time, the context and msg', () => {
    const records = ctl().logRecords();
    expect(records.length).toBeGreaterThan(0);
    for (const r of records) {
      expect(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).toContain(r.level);
      expect(r.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(r.context).toEqual(expect.any(String));
      expect(r).toHaveProperty('msg');
    }
  });

  it('the contexts behind the gateway log their requests at debug level only', () => {
    const aboveDebug = ctl().logRecords().filter((r) => r.msg === 'request finished' && r.context !== 'gateway' && r.level !== 'debug');
    expect(aboveDebug).toEqual([]);
  });
});
