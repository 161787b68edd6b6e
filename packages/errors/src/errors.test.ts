import { Metadata } from '@grpc/grpc-js';
import { ApiError } from './api-error.js';
import { Errors } from './catalogue.js';
import { createdEnvelope, errorEnvelope, formatTimestamp, listEnvelope } from './envelope.js';
import { fromGrpcError, toGrpcError } from './grpc.js';

describe('error catalogue', () => {
  it('has unique codes whose keys match their code', () => {
    for (const [key, def] of Object.entries(Errors)) expect(def.code).toBe(key);
  });

  it('uses the statuses of the reference for the codes clients switch on', () => {
    expect(Errors.NOT_FOUND.status).toBe(404);
    expect(Errors.UNAUTHORIZED.status).toBe(401);
    expect(Errors.INVALID_AUTH.status).toBe(401);
    expect(Errors.COULD_NOT_VALIDATE.status).toBe(400);
    expect(Errors.METHOD_NOT_ALLOWED.status).toBe(405);
    expect(Errors.REQUEST_ENTITY_TOO_LARGE.status).toBe(413);
    expect(Errors.INVALID_ENROLLMENT_ALREADY_ENROLLED.status).toBe(410);
    expect(Errors.UNSUPPORTED_MEDIA.status).toBe(415);
    expect(Errors.TIMEOUT.status).toBe(503);
  });
});

describe('envelopes', () => {
  it('renders an error with code, message, requestId, cause and the version meta', () => {
    const env = errorEnvelope(ApiError.notFound('identity with id abc not found'), 'Xy3.kLm9-');
    expect(env).toEqual({
      error: {
        code: 'NOT_FOUND',
        message: 'The resource requested was not found or is no longer available',
        requestId: 'Xy3.kLm9-',
        cause: { code: 'UNHANDLED', message: 'identity with id abc not found' },
      },
      meta: { apiEnrollmentVersion: '0.0.1', apiVersion: '0.0.1' },
    });
  });

  it('omits cause when there is none', () => {
    expect(Object.keys(errorEnvelope(ApiError.of('UNAUTHORIZED'), 'r').error)).toEqual(['code', 'message', 'requestId']);
  });

  it('renders field errors as COULD_NOT_VALIDATE with string values', () => {
    const err = ApiError.field('roleAttributes', 'role attributes may not be prefixed with #', ['#a', 'b']);
    expect(err.status).toBe(400);
    expect(err.code).toBe('COULD_NOT_VALIDATE');
    expect(err.cause).toEqual({ field: 'roleAttributes', reason: 'role attributes may not be prefixed with #', value: '[#a b]' });
  });

  it('builds the 201 create shape with a relative self link', () => {
    expect(createdEnvelope('identities', 'abc')).toEqual({
      data: { _links: { self: { href: './identities/abc' } }, id: 'abc' },
      meta: {},
    });
  });

  it('omits empty filterableFields from list meta', () => {
    expect(listEnvelope([], { limit: 10, offset: 0, totalCount: 0 }, [])).toEqual({
      data: [],
      meta: { pagination: { limit: 10, offset: 0, totalCount: 0 } },
    });
    expect(listEnvelope([], { limit: 10, offset: 0, totalCount: 0 }, ['id']).meta.filterableFields).toEqual(['id']);
  });

  it('formats timestamps as RFC 3339 with milliseconds in UTC', () => {
    expect(formatTimestamp(new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678)))).toBe('2026-01-02T03:04:05.678Z');
  });
});

describe('errors across gRPC', () => {
  it('keeps code, status, cause and headers intact', () => {
    const original = ApiError.of('UNAUTHORIZED', {
      cause: { code: 'UNHANDLED', message: 'session gone' },
      headers: { 'WWW-Authenticate': 'zt-session realm="zt-session" error="invalid" error_description="token is invalid"' },
    });
    const back = fromGrpcError(toGrpcError(original));
    expect(back).toBeInstanceOf(ApiError);
    expect(back.code).toBe('UNAUTHORIZED');
    expect(back.status).toBe(401);
    expect(back.message).toBe(original.message);
    expect(back.cause).toEqual(original.cause);
    expect(back.headers).toEqual(original.headers);
  });

  it('turns a non-ApiError into UNHANDLED, an unreachable server into SERVICE_UNAVAILABLE and a deadline into TIMEOUT', () => {
    expect(fromGrpcError(toGrpcError(new Error('boom'))).code).toBe('UNHANDLED');
    expect(fromGrpcError({ code: 13, details: 'x' }).code).toBe('UNHANDLED');
    const unreachable = fromGrpcError({ code: 14, details: 'No connection established. Last error: connect ECONNREFUSED 127.0.0.1:18203' });
    expect([unreachable.code, unreachable.status, unreachable.dependency]).toEqual(['SERVICE_UNAVAILABLE', 503, 'context']);
    expect(fromGrpcError({ code: 4, details: 'Deadline exceeded' }).code).toBe('TIMEOUT');
  });

  it('carries a database outage of the server across as 503 SERVICE_UNAVAILABLE', () => {
    const down = Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:5432'), { code: 'ECONNREFUSED', syscall: 'connect', errno: -111 });
    const grpcErr = toGrpcError(down);
    expect(grpcErr.code).toBe(14);
    const back = fromGrpcError(grpcErr);
    expect([back.code, back.status]).toEqual(['SERVICE_UNAVAILABLE', 503]);
    expect(errorEnvelope(back, 'r').error).toEqual({ code: 'SERVICE_UNAVAILABLE', message: Errors.SERVICE_UNAVAILABLE.message, requestId: 'r' });
  });

  it('never throws, whatever text the error carries, and the text survives the wire', () => {
    const hostile = 'invalid byte sequence for encoding "UTF8": 0x00\nat /srv/app/node_modules/pg/lib/client.js:1:1 \u0000 \ud800 é 漢';
    const errors = [
      new Error(hostile),
      ApiError.of('COULD_NOT_VALIDATE', { cause: { field: hostile, reason: hostile, value: hostile } }),
      ApiError.of('UNAUTHORIZED', { message: hostile, headers: { 'x-detail': hostile } }),
      Object.assign(ApiError.of('NOT_FOUND'), { code: 'NOT A\nCODE' }),
    ];
    for (const err of errors) {
      const grpcErr = toGrpcError(err);
      // What the wire carries: grpc-js validates every entry when it builds the HTTP/2 trailers.
      const wire = Metadata.fromHttp2Headers(grpcErr.metadata!.toHttp2Headers() as import('node:http2').IncomingHttpHeaders);
      const back = fromGrpcError({ ...grpcErr, metadata: wire });
      expect(back).toBeInstanceOf(ApiError);
      expect(/^[ -~]*$/.test(grpcErr.details!)).toBe(true);
      if (err instanceof ApiError && err.code !== 'NOT A\nCODE') {
        expect(back.code).toBe(err.code);
        expect(back.cause).toEqual(err.cause);
        expect(back.message).toBe(err.message);
        expect(back.headers).toEqual(err.headers);
      }
    }
    expect(fromGrpcError(toGrpcError(errors[3])).code).toBe('UNHANDLED');
  });

  it('carries a cause that cannot be serialised as an error without it', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const back = fromGrpcError(toGrpcError(ApiError.of('NOT_FOUND', { cause: cyclic as never })));
    expect(back.code).toBe('NOT_FOUND');
    expect(back.cause).toBeUndefined();
  });
});

describe('server errors on the wire', () => {
  it('say only their code, the catalogue message and the request id', () => {
    const err = ApiError.unhandled(new Error('connect ECONNREFUSED 10.0.0.5:5432 at /srv/app/dist/store.js:12:3'));
    expect(errorEnvelope(err, 'req1')).toEqual({
      error: { code: 'UNHANDLED', message: 'An unhandled error occurred', requestId: 'req1' },
      meta: { apiEnrollmentVersion: '0.0.1', apiVersion: '0.0.1' },
    });
    const timeout = ApiError.of('TIMEOUT', { message: 'policy at 10.0.0.7:18203 did not answer', cause: { code: 'UNHANDLED', message: 'ECONNREFUSED' } });
    expect(errorEnvelope(timeout, 'req2').error).toEqual({ code: 'TIMEOUT', message: 'The requested operation took too much time to reply', requestId: 'req2' });
  });

  it('keep the cause of a client error (4xx)', () => {
    expect(errorEnvelope(ApiError.field('name', 'name in body is required'), 'r').error.cause).toEqual({ field: 'name', reason: 'name in body is required' });
  });
});
