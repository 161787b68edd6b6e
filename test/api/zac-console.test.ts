import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BASE } from '../support/clients.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectError, expectSuccess } from '../support/envelope.js';
import type { HttpResponse } from '../support/http.js';

/**
 * The admin console (ZAC) served by the controller at `/zac/` from the directory `zacDir`
 * (`ZITI_ZAC_DIR`) names, as OpenZiti's controller serves it: files with their content types,
 * the index for the console's own routes, nothing outside the directory, and the APIs unchanged.
 */

const INDEX = '<!doctype html><html><head><base href="/zac/"></head><body>FAKE-ZAC-INDEX</body></html>';
const SECRET = 'OUTSIDE-THE-CONSOLE-DIRECTORY';

// The build sits in <tmp>/zac; a file beside it (<tmp>/secret.txt) must never be served.
const top = mkdtempSync(path.join(os.tmpdir(), 'ziti-zac-'));
const zacDir = path.join(top, 'zac');
mkdirSync(path.join(zacDir, 'assets', 'i18n'), { recursive: true });
mkdirSync(path.join(zacDir, 'pages'), { recursive: true });
writeFileSync(path.join(zacDir, 'index.html'), INDEX);
writeFileSync(path.join(zacDir, 'main.3f2a.js'), 'console.log("zac");');
writeFileSync(path.join(zacDir, 'styles.9c1d.css'), 'body{margin:0}');
writeFileSync(path.join(zacDir, 'assets', 'logo.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
writeFileSync(path.join(zacDir, 'assets', 'i18n', 'en.json'), '{"hello":"world"}');
writeFileSync(path.join(zacDir, 'favicon.ico'), Buffer.from([0, 0, 1, 0]));
writeFileSync(path.join(top, 'secret.txt'), SECRET);
symlinkSync(path.join(top, 'secret.txt'), path.join(zacDir, 'leak.txt'));
symlinkSync(top, path.join(zacDir, 'outside'));

const ctl = useController({ zacDir });
failOnConformanceProblems();
afterAll(() => rmSync(top, { recursive: true, force: true }));

/** A console request: its body is a file, not an Edge API answer, so it is not checked against the swagger. */
const get = (p: string, headers: Record<string, string> = {}, method = 'GET') =>
  ctl().http.request({ method, path: p, headers: { accept: '*/*', ...headers }, validate: false });

function expectIndex(res: HttpResponse): void {
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
  expect(res.text).toBe(INDEX);
}

describe('files of the build', () => {
  it('serves the index at /zac/ and /zac', async () => {
    expectIndex(await get('/zac/'));
    expectIndex(await get('/zac'));
  });

  it('redirects /zac/index.html to its directory, as Go http.ServeFile does', async () => {
    const res = await get('/zac/index.html');
    expect(res.status).toBe(301);
    expect(res.headers.location).toBe('./');
  });

  it.each([
    ['/zac/main.3f2a.js', 'text/javascript; charset=utf-8', 'console.log("zac");'],
    ['/zac/styles.9c1d.css', 'text/css; charset=utf-8', 'body{margin:0}'],
    ['/zac/assets/logo.svg', 'image/svg+xml', '<svg xmlns="http://www.w3.org/2000/svg"/>'],
    ['/zac/assets/i18n/en.json', 'application/json', '{"hello":"world"}'],
    ['/assets/i18n/en.json', 'application/json', '{"hello":"world"}'],
  ])('serves %s as %s with its length and modification time', async (p, type, body) => {
    const res = await get(p);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe(type);
    expect(res.text).toBe(body);
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(body));
    expect(Date.parse(String(res.headers['last-modified']))).not.toBeNaN();
  });

  it('answers HEAD with the headers and no body, and 304 to a current If-Modified-Since', async () => {
    const head = await get('/zac/main.3f2a.js', {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(head.text).toBe('');
    const again = await get('/zac/main.3f2a.js', { 'if-modified-since': String(head.headers['last-modified']) });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    const older = await get('/zac/main.3f2a.js', { 'if-modified-since': 'Thu, 01 Jan 1970 00:00:00 GMT' });
    expect(older.status).toBe(200);
  });

  it('falls back to the index for the console routes, unknown files and directories', async () => {
    for (const p of ['/zac/login', '/zac/identities/abc123', '/zac/services/x/y/z?tab=2', '/zac/pages', '/zac/pages/', '/zac/nope.js', '/zac/assets/']) {
      expectIndex(await get(p));
    }
  });

  it('refuses other methods in the envelope', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const res = await ctl().http.request({ method, path: '/zac/main.3f2a.js', raw: '{}' });
      expectError(res, 405, 'METHOD_NOT_ALLOWED');
    }
  });
});

describe('nothing outside the directory', () => {
  it.each([
    '/zac/../secret.txt',
    '/zac/../../../../../../etc/passwd',
    '/zac/%2e%2e/secret.txt',
    '/zac/%2E%2E/secret.txt',
    '/zac/..%2fsecret.txt',
    '/zac/%2e%2e%2fsecret.txt',
    '/zac/..%5csecret.txt',
    '/zac/assets/%2e%2e/%2e%2e/secret.txt',
    '/assets/../../secret.txt',
    '/zac/index.html%00.js',
    '/zac/%00',
    '/zac/%zz',
  ])('refuses %s with 404 in the envelope', async (p) => {
    const res = await ctl().http.request({ path: p });
    expectError(res, 404, 'NOT_FOUND');
    expect(res.text).not.toContain(SECRET);
    expect(res.text).not.toContain('root:');
  });

  it('never follows a symlink out of the directory (the index answers instead)', async () => {
    for (const p of ['/zac/leak.txt', '/zac/outside/secret.txt', '/zac/outside/zac/index.html.bak']) {
      const res = await get(p);
      expect(res.text).not.toContain(SECRET);
      expectIndex(res);
    }
  });
});

describe('the APIs beside the console', () => {
  it('still answer on both APIs, the console calls of ZAC included', async () => {
    expectSuccess(await ctl().http.get(`${BASE.management}/version`), 200);
    expectSuccess(await ctl().http.get(`${BASE.client}/version`), 200);
    const mgmt = await ctl().adminSession();
    expectSuccess(await mgmt.identities.list(), 200);
    expectSuccess(await ctl().http.get(`${BASE.client}/external-jwt-signers`), 200);
  });

  it('leaves paths that only start like the console to the APIs (404 in the envelope)', async () => {
    expectError(await ctl().http.get('/zacx'), 404, 'NOT_FOUND');
    expectError(await ctl().http.get(`${BASE.management}/zac/`), 404, 'NOT_FOUND');
  });
});
