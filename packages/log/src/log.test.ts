import { LogSettingsError, configureLogging, currentRequestId, formatPretty, lineLogger, logSettings, logger, runWithRequest, scrubSecrets } from './index.js';

/** A destination that keeps every line written to it. */
function collector(): { lines: string[]; records(): Record<string, unknown>[]; write(line: string): void } {
  const lines: string[] = [];
  return { lines, records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>), write: (line) => void lines.push(line) };
}

describe('settings', () => {
  it('defaults to info and json; takes every level name and either format, in any case', () => {
    expect(logSettings({})).toEqual({ level: 'info', format: 'json' });
    for (const level of ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']) expect(logSettings({ ZITI_LOG_LEVEL: level.toUpperCase() }).level).toBe(level);
    expect(logSettings({ ZITI_LOG_FORMAT: 'Pretty' }).format).toBe('pretty');
  });

  it('refuses an unknown level or format with the setting and the values it takes', () => {
    expect(() => logSettings({ ZITI_LOG_LEVEL: 'verbose' })).toThrow('ZITI_LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent (got "verbose")');
    expect(() => logSettings({ ZITI_LOG_FORMAT: 'xml' })).toThrow(/ZITI_LOG_FORMAT must be one of json, pretty/);
    expect(() => logSettings({ ZITI_LOG_FORMAT: 'xml' })).toThrow(LogSettingsError);
  });

  it('fails configureLogging on an unknown ZITI_LOG_LEVEL, where a process starts', () => {
    const before = process.env.ZITI_LOG_LEVEL;
    process.env.ZITI_LOG_LEVEL = 'loud';
    try {
      expect(() => configureLogging({ destination: collector() })).toThrow(/ZITI_LOG_LEVEL/);
    } finally {
      if (before === undefined) delete process.env.ZITI_LOG_LEVEL;
      else process.env.ZITI_LOG_LEVEL = before;
    }
  });
});

describe('records', () => {
  it('carry level (its name), an ISO-8601 time, the context and msg', () => {
    const out = collector();
    configureLogging({ level: 'info', format: 'json', destination: out });
    logger('gateway').info('listening');
    const [record] = out.records();
    expect(record).toMatchObject({ level: 'info', context: 'gateway', msg: 'listening' });
    expect(record!.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(out.lines[0]!.endsWith('\n')).toBe(true);
  });

  it('are written from the configured level up only', () => {
    const out = collector();
    configureLogging({ level: 'warn', format: 'json', destination: out });
    const log = logger('policy');
    log.debug('no');
    log.info('no');
    log.warn('yes');
    log.error('yes');
    expect(out.records().map((r) => r.level)).toEqual(['warn', 'error']);
    expect(log.isLevelEnabled('info')).toBe(false);
    configureLogging({ level: 'silent', format: 'json', destination: out });
    log.fatal('no');
    expect(out.lines).toHaveLength(2);
  });

  it('follow a later configuration from a logger made before it', () => {
    const first = collector();
    const second = collector();
    configureLogging({ level: 'info', format: 'json', destination: first });
    const log = logger('session');
    log.info('one');
    configureLogging({ level: 'debug', format: 'json', destination: second });
    log.debug('two');
    expect(first.records().map((r) => r.msg)).toEqual(['one']);
    expect(second.records().map((r) => r.msg)).toEqual(['two']);
  });

  it('serialize an error as err with its type, message and stack', () => {
    const out = collector();
    configureLogging({ level: 'info', format: 'json', destination: out });
    logger('posture').error({ err: new TypeError('boom') }, 'failed');
    const err = out.records()[0]!.err as Record<string, string>;
    expect(err).toMatchObject({ type: 'TypeError', message: 'boom' });
    expect(err.stack).toContain('TypeError: boom');
  });

  it('pretty: one readable line per record', () => {
    const out = collector();
    configureLogging({ level: 'info', format: 'pretty', destination: out });
    runWithRequest({ requestId: 'r1' }, () => logger('gateway').error({ err: new Error('boom'), status: 500 }, 'request finished'));
    expect(out.lines).toHaveLength(1);
    const line = out.lines[0]!;
    expect(line.endsWith('\n') && line.indexOf('\n') === line.length - 1).toBe(true);
    expect(line).toMatch(/^\d\d:\d\d:\d\d\.\d{3} ERROR gateway request finished requestId=r1 err="Error: boom \(at .+\)" status=500\n$/);
    expect(formatPretty({ time: '2026-11-26T19:02:09.123Z', level: 'info', context: 'policy', msg: 'x', note: 'two words' })).toBe('19:02:09.123 INFO  policy x note="two words"\n');
  });
});

describe('lineLogger', () => {
  it('writes text lines as records at its level, without the context prefix they were written with', () => {
    const out = collector();
    configureLogging({ level: 'info', format: 'json', destination: out });
    const line = lineLogger(logger('policy'), 'warn');
    line('policy: SyncIdentity failed');
    line('posture: not this context');
    expect(out.records().map((r) => [r.level, r.context, r.msg])).toEqual([
      ['warn', 'policy', 'SyncIdentity failed'],
      ['warn', 'policy', 'posture: not this context'],
    ]);
  });

  it('without a level: warn for a line that reports trouble, info for the rest', () => {
    const out = collector();
    configureLogging({ level: 'info', format: 'json', destination: out });
    const line = lineLogger(logger('identity-auth'));
    line('identity-auth: http http://127.0.0.1:1, grpc 127.0.0.1:2');
    line('identity-auth: SyncIdentity(a1) failed, the identity event will converge it');
    line('identity-auth: pki-enrollment unavailable');
    expect(out.records().map((r) => r.level)).toEqual(['info', 'warn', 'warn']);
  });
});

describe('request context', () => {
  it('adds requestId, operationId and identityId to lines logged while serving the request, across awaits', async () => {
    const out = collector();
    configureLogging({ level: 'info', format: 'json', destination: out });
    const log = logger('identity-auth');
    const request = { requestId: 'Xy3kLm9ab' } as { requestId: string; operationId?: string; identityId?: string };
    await runWithRequest(request, async () => {
      log.info('arrived');
      await new Promise((r) => setImmediate(r));
      request.operationId = 'listIdentities';
      request.identityId = 'id1';
      log.info('served');
      expect(currentRequestId()).toBe('Xy3kLm9ab');
    });
    log.info('outside');
    const [arrived, served, outside] = out.records();
    expect(arrived).toMatchObject({ requestId: 'Xy3kLm9ab' });
    expect(arrived).not.toHaveProperty('operationId');
    expect(served).toMatchObject({ requestId: 'Xy3kLm9ab', operationId: 'listIdentities', identityId: 'id1' });
    expect(outside).not.toHaveProperty('requestId');
    expect(currentRequestId()).toBeUndefined();
  });

  it('lets a line name its own requestId (the access line of another request)', () => {
    const out = collector();
    configureLogging({ level: 'info', format: 'json', destination: out });
    runWithRequest({ requestId: 'outer' }, () => logger('gateway').info({ requestId: 'inner' }, 'x'));
    expect(out.records()[0]!.requestId).toBe('inner');
  });
});

describe('redaction', () => {
  const SECRETS = {
    password: 'S3cret-password!',
    sessionToken: '5d0c7c2e-2f2a-4a49-9b3c-0fd1f0a1c111',
    bearer: 'Bearer abc.def.ghi-bearer',
    cookie: 'session=cookie-secret-value',
    principal: 'signed-principal-token-value',
    jwt: 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJlbnJvbGwifQ.c2lnbmF0dXJl',
    ott: 'one-time-token-value',
    privateKey: '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----',
    internalSecret: 'internal-secret-hex-0123456789abcdef',
    totp: '482913',
    databasePassword: 'pg-password-value',
  };

  it('keeps every kind of secret out of the output, in fields, headers, bodies, messages and errors', () => {
    const out = collector();
    configureLogging({ level: 'info', format: 'json', destination: out });
    const log = logger('gateway');
    const databaseUrl = `postgresql://ziti:${SECRETS.databasePassword}@db:5432/ziti`;
    log.info({ password: SECRETS.password, body: { username: 'admin', password: SECRETS.password, code: SECRETS.totp } }, 'login');
    log.info(
      {
        headers: {
          'zt-session': SECRETS.sessionToken,
          authorization: SECRETS.bearer,
          cookie: SECRETS.cookie,
          'x-ziti-principal': SECRETS.principal,
          'content-type': 'application/json',
        },
      },
      'headers',
    );
    log.info({ req: { headers: { authorization: SECRETS.bearer, 'zt-session': SECRETS.sessionToken } } }, 'request');
    log.info({ enrollment: { jwt: SECRETS.jwt, ott: SECRETS.ott }, token: SECRETS.sessionToken }, 'enrollment');
    log.info({ pki: { privateKey: SECRETS.privateKey, keyPem: SECRETS.privateKey } }, 'pki');
    log.info({ internalSecret: SECRETS.internalSecret, config: { secret: SECRETS.internalSecret, databaseUrl } }, 'config');
    log.info({ mfa: { totpCode: SECRETS.totp, recoveryCode: SECRETS.totp } }, 'mfa');
    log.info(`enrolling with ${SECRETS.jwt}; key ${SECRETS.privateKey}`);
    log.warn(`connecting to ${databaseUrl}`);
    log.error({ err: new Error(`connect to ${databaseUrl} failed`) }, 'database down');
    const text = out.lines.join('');
    for (const [kind, secret] of Object.entries(SECRETS)) expect({ kind, found: text.includes(secret) }).toEqual({ kind, found: false });
    // What is not secret stays readable.
    expect(text).toContain('postgresql://ziti:[Redacted]@db:5432/ziti');
    expect(text).toContain('"content-type":"application/json"');
    expect(text).toContain('"username":"admin"');
    expect(out.records()[0]).toMatchObject({ password: '[Redacted]', body: { password: '[Redacted]', code: '[Redacted]' } });
  });

  it('redacts nested fields in a copy: the objects given to the log are left as they were', () => {
    const out = collector();
    configureLogging({ level: 'info', format: 'json', destination: out });
    const headers = { 'zt-session': SECRETS.sessionToken, accept: 'application/json' };
    const deep = { a: { b: { password: SECRETS.password, keep: 1 } } };
    logger('gateway').info({ headers, deep }, 'given');
    expect(headers['zt-session']).toBe(SECRETS.sessionToken);
    expect(deep.a.b.password).toBe(SECRETS.password);
    expect(out.records()[0]).toMatchObject({ headers: { 'zt-session': '[Redacted]', accept: 'application/json' }, deep: { a: { b: { password: '[Redacted]', keep: 1 } } } });
  });

  it('scrubSecrets leaves text without secrets as it is', () => {
    const text = 'GET /edge/client/v1/version 200 in 1.2 ms (https://localhost:1280)';
    expect(scrubSecrets(text)).toBe(text);
  });
});
