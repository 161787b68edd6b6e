import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { ApiError } from '@ziti/errors';
import iconv from 'iconv-lite';
import { answerClientError, attachBufferedBody, readJsonBody, sendBody, sendError, sendJson, withUtf8Charset } from './http.js';

/** Serves `app` on an ephemeral port for the duration of `fn`. */
async function serving(app: (req: IncomingMessage, res: ServerResponse) => void, fn: (url: string) => Promise<void>): Promise<void> {
  const server = createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    await fn(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
}

/** An app that answers the JSON body it read (or the error it got) in the envelope. */
const echo = (req: IncomingMessage, res: ServerResponse) => {
  readJsonBody(req).then(
    (body) => sendJson(res, { data: { body: body === undefined ? '(none)' : body }, meta: {} }),
    (err: unknown) => sendError(res, err, 'rid'),
  );
};

const post = (url: string, body: string | Buffer | undefined, headers: Record<string, string>) => fetch(url, { method: 'POST', body, headers });
/** The JSON of a response. */
const json = async (res: Response | Promise<Response>): Promise<any> => (await res).json();

describe('readJsonBody', () => {
  it('parses JSON and JSON-suffixed media types, any JSON value, an empty body as {}', async () => {
    await serving(echo, async (url) => {
      expect((await json(post(url, '{"a":1}', { 'content-type': 'application/json' }))).data.body).toEqual({ a: 1 });
      expect((await json(post(url, '[1,2]', { 'content-type': 'Application/Vnd.Thing+JSON; charset=UTF-8' }))).data.body).toEqual([1, 2]);
      expect((await json(post(url, '"text"', { 'content-type': 'application/json' }))).data.body).toBe('text');
      expect((await json(post(url, '', { 'content-type': 'application/json', 'content-length': '0' }))).data.body).toEqual({});
    });
  });

  it('leaves a body of another media type, or none at all, unread', async () => {
    await serving(echo, async (url) => {
      expect((await json(post(url, '{"a":1}', { 'content-type': 'text/plain' }))).data.body).toBe('(none)');
      expect((await json(post(url, '{"a":1}', {}))).data.body).toBe('(none)');
      expect((await json(fetch(url))).data.body).toBe('(none)');
    });
  });

  it('answers malformed JSON with 400 COULD_NOT_PARSE_BODY', async () => {
    await serving(echo, async (url) => {
      const res = await post(url, '{"a":', { 'content-type': 'application/json' });
      expect(res.status).toBe(400);
      expect((await json(res)).error.code).toBe('COULD_NOT_PARSE_BODY');
    });
  });

  it('answers a body over 1 MiB with 413, declared or streamed, and also after decompression', async () => {
    const big = JSON.stringify({ a: 'x'.repeat(1024 * 1024) });
    await serving(echo, async (url) => {
      const declared = await post(url, big, { 'content-type': 'application/json' });
      expect(declared.status).toBe(413);
      expect((await json(declared)).error.code).toBe('REQUEST_ENTITY_TOO_LARGE');
      const chunked = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: new Blob([big]).stream(),
        duplex: 'half',
      } as RequestInit);
      expect(chunked.status).toBe(413);
      const bomb = await post(url, gzipSync(big), { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      expect(bomb.status).toBe(413);
    });
  });

  it('inflates gzip, decodes UTF-16 and strips a byte order mark', async () => {
    await serving(echo, async (url) => {
      expect((await json(post(url, gzipSync('{"z":true}'), { 'content-type': 'application/json', 'content-encoding': 'gzip' }))).data.body).toEqual({ z: true });
      const utf16 = iconv.encode('{"w":"é"}', 'utf-16le');
      expect((await json(post(url, utf16, { 'content-type': 'application/json; charset=utf-16le' }))).data.body).toEqual({ w: 'é' });
      expect((await json(post(url, '\ufeff{"b":1}', { 'content-type': 'application/json' }))).data.body).toEqual({ b: 1 });
    });
  });

  it('refuses a charset that is not UTF and an unknown content encoding with 415', async () => {
    await serving(echo, async (url) => {
      const latin = await post(url, '{}', { 'content-type': 'application/json; charset=latin1' });
      expect(latin.status).toBe(415);
      expect((await json(latin)).error.code).toBe('COULD_NOT_VALIDATE');
      expect((await post(url, '{}', { 'content-type': 'application/json', 'content-encoding': 'compress' })).status).toBe(415);
    });
  });

  it('takes the body a request carries from an in-process hand-over instead of reading the stream', async () => {
    const req = { headers: { 'content-type': 'application/json', 'content-length': '7' } } as unknown as IncomingMessage;
    attachBufferedBody(req, Buffer.from('{"k":2}'));
    await expect(readJsonBody(req)).resolves.toEqual({ k: 2 });
  });
});

describe('responses', () => {
  it('sends text with charset=utf-8 and its length, binary as given', async () => {
    const app = (req: IncomingMessage, res: ServerResponse) => {
      if (req.url === '/text') sendBody(res, 'héllo', 'text/yaml');
      else if (req.url === '/bin') sendBody(res, Buffer.from([1, 2, 3]), 'image/png');
      else sendJson(res, { data: { limit: 9223372036854775807 }, meta: {} });
    };
    await serving(app, async (url) => {
      const text = await fetch(`${url}/text`);
      expect(text.headers.get('content-type')).toBe('text/yaml; charset=utf-8');
      expect(text.headers.get('content-length')).toBe('6');
      const bin = await fetch(`${url}/bin`);
      expect([bin.headers.get('content-type'), bin.headers.get('content-length')]).toEqual(['image/png', '3']);
      const json = await fetch(`${url}/json`);
      expect(json.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(await json.text()).toBe('{"data":{"limit":9223372036854775807},"meta":{}}');
    });
  });

  it('sends 204 without a body or content headers, and HEAD without a body', async () => {
    const app = (req: IncomingMessage, res: ServerResponse) => {
      res.statusCode = req.url === '/none' ? 204 : 200;
      sendJson(res, { data: {}, meta: {} });
    };
    await serving(app, async (url) => {
      const none = await fetch(`${url}/none`);
      expect([none.status, none.headers.get('content-type'), await none.text()]).toEqual([204, null, '']);
      const head = await fetch(`${url}/x`, { method: 'HEAD' });
      expect([head.status, head.headers.get('content-length'), await head.text()]).toEqual([200, '21', '']);
    });
  });

  it('sends an error in the envelope with its status and headers', async () => {
    const app = (_req: IncomingMessage, res: ServerResponse) =>
      sendError(res, ApiError.of('UNAUTHORIZED', { headers: { 'WWW-Authenticate': 'Bearer realm="x"' } }), 'rid-1');
    await serving(app, async (url) => {
      const res = await fetch(url);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="x"');
      const body = await json(res);
      expect([body.error.code, body.error.requestId]).toEqual(['UNAUTHORIZED', 'rid-1']);
    });
  });

  it('sends an error whose header holds text Node refuses (CR/LF, beyond Latin-1): the value encoded, the answer whole', async () => {
    const app = (_req: IncomingMessage, res: ServerResponse) =>
      sendError(res, ApiError.of('UNAUTHORIZED', { headers: { 'WWW-Authenticate': 'Bearer issuer="€\r\nset-cookie: a=b"' } }), 'rid-2');
    await serving(app, async (url) => {
      const res = await fetch(url);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer issuer="%E2%82%AC%0D%0Aset-cookie: a=b"');
      expect(res.headers.get('set-cookie')).toBeNull();
      expect((await json(res)).error.requestId).toBe('rid-2');
    });
  });

  it('sets charset=utf-8 on a media type, replacing another charset and keeping other parameters', () => {
    expect(withUtf8Charset('application/json')).toBe('application/json; charset=utf-8');
    expect(withUtf8Charset('application/json; charset=ISO-8859-1')).toBe('application/json; charset=utf-8');
    expect(withUtf8Charset('text/plain; format=flowed')).toBe('text/plain; format=flowed; charset=utf-8');
  });
});

describe('answerClientError', () => {
  const rawRequest = (port: number, text: string) =>
    new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write(text));
      let got = '';
      socket.on('data', (d) => (got += d.toString('latin1')));
      socket.on('end', () => resolve(got));
      socket.on('error', reject);
    });

  it('answers a request the parser refuses in the envelope, and closes the connection', async () => {
    const server = createServer((_req, res) => res.end('reached'));
    server.on('clientError', (err: Error, socket) => answerClientError(err, socket, 'rid-1'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { port } = server.address() as AddressInfo;
      const nul = await rawRequest(port, 'GET / HTTP/1.1\r\nHost: x\r\nzt-session: a\u0000b\r\n\r\n');
      expect(nul).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
      expect(nul).toContain('connection: close');
      const body = JSON.parse(nul.slice(nul.indexOf('\r\n\r\n') + 4));
      expect(body).toEqual({
        error: { code: 'COULD_NOT_VALIDATE', message: 'The supplied request contains an invalid document', requestId: 'rid-1' },
        meta: { apiEnrollmentVersion: '0.0.1', apiVersion: '0.0.1' },
      });
      const huge = await rawRequest(port, `GET / HTTP/1.1\r\nHost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`);
      expect(huge).toMatch(/^HTTP\/1\.1 431 /);
    } finally {
      server.close();
    }
  });
});
