import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { BASE, uniqueName, type EdgeApi } from '../support/clients.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectError, expectFieldError, expectList, expectSuccess } from '../support/envelope.js';

/** Error envelopes of the framework level (reference §3.1–§3.3) and of body validation. */

const ctl = useController();
failOnConformanceProblems();

const MiB = 1024 * 1024;
const AUTH = `${BASE.client}/authenticate?method=password`;

/** A JSON login body of exactly `size` bytes. */
function loginBody(size: number): Buffer {
  const head = '{"username":"nobody-at-all","password":"';
  const tail = '"}';
  return Buffer.from(head + 'x'.repeat(size - head.length - tail.length) + tail);
}

/** Heap, external and array-buffer memory of this process (the controller runs in it) after full collections. */
function retainedBytes(): number {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.external + m.arrayBuffers;
}

describe('a burst of large hostile bodies', () => {
  it('answers each 400 in the envelope and leaves the memory where it was', async () => {
    const deep = Buffer.from(`${'['.repeat(200_000)}${']'.repeat(200_000)}`); // 400 KB, nested 200,000 deep
    const send = () => ctl().http.request({ method: 'POST', path: AUTH, raw: deep, headers: { 'content-type': 'application/json' } });
    await send();
    const before = retainedBytes();
    for (let round = 0; round < 6; round++) {
      const answers = await Promise.all(Array.from({ length: 50 }, send));
      for (const res of answers) expectError(res, 400, 'COULD_NOT_PARSE_BODY');
    }
    // 300 bodies (120 MB) went through; what stays is far less than one round of them (20 MB).
    expect(retainedBytes() - before).toBeLessThan(16 * MiB);
  });
});

describe('framework errors', () => {
  it('unknown path → 404 NOT_FOUND', async () => {
    const res = await ctl().http.get('/edge/management/v1/i-do-not-exist');
    expectError(res, 404, 'NOT_FOUND');
  });

  it('unknown path on the client API → 404 NOT_FOUND', async () => {
    const res = await ctl().http.get(`${BASE.client}/i-do-not-exist/either`);
    expectError(res, 404, 'NOT_FOUND');
  });

  it('wrong verb → 405 METHOD_NOT_ALLOWED', async () => {
    const res = await ctl().http.request({ method: 'POST', path: `${BASE.client}/version`, json: {} });
    expectError(res, 405, 'METHOD_NOT_ALLOWED');
  });

  it('a body over 1 MiB (content-length) → 413 REQUEST_ENTITY_TOO_LARGE', async () => {
    const res = await ctl().http.request({ method: 'POST', path: AUTH, raw: loginBody(MiB + 1024) });
    expectError(res, 413, 'REQUEST_ENTITY_TOO_LARGE');
  });

  it('a body over 1 MiB sent chunked → 413 REQUEST_ENTITY_TOO_LARGE', async () => {
    const body = loginBody(MiB + 64 * 1024);
    const chunks: Buffer[] = [];
    for (let i = 0; i < body.length; i += 64 * 1024) chunks.push(body.subarray(i, i + 64 * 1024));
    const res = await ctl().http.request({ method: 'POST', path: AUTH, chunks });
    expectError(res, 413, 'REQUEST_ENTITY_TOO_LARGE');
  });

  it('an over-limit body is refused before authentication, even on a protected route', async () => {
    const res = await ctl().http.request({ method: 'POST', path: `${BASE.management}/identities`, raw: loginBody(MiB + 1024) });
    expectError(res, 413, 'REQUEST_ENTITY_TOO_LARGE');
  });

  it('the limit is exactly 1 MiB: a valid login padded to 1 MiB works, one byte more → 413', async () => {
    const { username, password } = ctl().admin;
    const json = JSON.stringify({ username, password });
    const exact = Buffer.from(json + ' '.repeat(MiB - Buffer.byteLength(json)));
    expect(exact.length).toBe(MiB);
    const ok = await ctl().http.request({ method: 'POST', path: AUTH, raw: exact });
    expectSuccess(ok);
    expect(typeof ok.body.data.token).toBe('string');
    const over = await ctl().http.request({ method: 'POST', path: AUTH, raw: Buffer.concat([exact, Buffer.from(' ')]) });
    expectError(over, 413, 'REQUEST_ENTITY_TOO_LARGE');
  });

  it('a normal body to the same endpoint reaches the handler (401 INVALID_AUTH)', async () => {
    const res = await ctl().http.request({ method: 'POST', path: AUTH, json: { username: 'nobody-at-all', password: 'wrong-password' } });
    expectError(res, 401, 'INVALID_AUTH');
  });

  it('a small body sent chunked reaches the handler (401 INVALID_AUTH)', async () => {
    const res = await ctl().http.request({ method: 'POST', path: AUTH, chunks: [Buffer.from('{"username":"nobody-at-all",'), Buffer.from('"password":"wrong-password"}')] });
    expectError(res, 401, 'INVALID_AUTH');
  });

  it('malformed JSON → 400 COULD_NOT_PARSE_BODY (anonymous endpoint)', async () => {
    const res = await ctl().http.request({ method: 'POST', path: AUTH, raw: '{"username": "admin", "password": ' });
    expectError(res, 400, 'COULD_NOT_PARSE_BODY');
  });
});

describe('body validation on identity create', () => {
  let mgmt: EdgeApi;
  beforeAll(async () => {
    mgmt = await ctl().adminSession('management');
  });

  async function countNamed(name: string): Promise<number> {
    const res = await mgmt.identities.list({ filter: `name = "${name}"` });
    expectList(res);
    return res.body.meta.pagination.totalCount;
  }

  it('malformed JSON → 400 COULD_NOT_PARSE_BODY', async () => {
    const res = await ctl().http.request({ method: 'POST', path: `${BASE.management}/identities`, raw: '{"name": "x", ', token: mgmt.token });
    expectError(res, 400, 'COULD_NOT_PARSE_BODY');
  });

  it('a wrong type → 400 COULD_NOT_VALIDATE with cause.field, and nothing is created', async () => {
    const name = uniqueName('wrong-type');
    const res = await mgmt.identities.create({ name, type: 'Default', isAdmin: 'yes' });
    expectFieldError(res, 'isAdmin');
    expect(await countNamed(name)).toBe(0);
  });

  it('a name that is not a string → 400 COULD_NOT_VALIDATE with cause.field name', async () => {
    const res = await mgmt.identities.create({ name: 42, type: 'Default', isAdmin: false });
    expectFieldError(res, 'name');
  });

  it('an unknown field is ignored, as the controller ignores fields its models do not name', async () => {
    const name = uniqueName('unknown-field');
    const res = await mgmt.identities.create({ name, type: 'Default', isAdmin: false, bogusField: 1 });
    expect(res.status).toBe(201);
    expect(await countNamed(name)).toBe(1);
    expect((await mgmt.identities.get(res.body.data.id)).body.data).not.toHaveProperty('bogusField');
  });

  it('a missing required field → 400 COULD_NOT_VALIDATE with cause.field', async () => {
    const res = await mgmt.identities.create({ type: 'Default', isAdmin: false });
    expectFieldError(res, 'name');
  });

  it('a type outside the enum → 400 COULD_NOT_VALIDATE, and nothing is created', async () => {
    const name = uniqueName('bad-type');
    const res = await mgmt.identities.create({ name, type: 'Robot', isAdmin: false });
    expectFieldError(res, 'type');
    expect(await countNamed(name)).toBe(0);
  });
});
