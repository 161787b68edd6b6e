import { Metadata } from '@grpc/grpc-js';
import { toApiError } from './api-error.js';
import { DependencyMonitor, unavailableDependency } from './dependency.js';
import { errorEnvelope } from './envelope.js';

const pgError = (code: string, message = 'server said no') => Object.assign(new Error(message), { code, severity: 'FATAL' });
const socketError = (code: string) => Object.assign(new Error(`connect ${code} 10.0.0.5:5432`), { code, syscall: 'connect', errno: -111 });

describe('unavailableDependency', () => {
  it.each([
    ['57P01 admin shutdown', pgError('57P01', 'terminating connection due to administrator command')],
    ['57P02 crash shutdown', pgError('57P02')],
    ['57P03 cannot connect now', pgError('57P03', 'the database system is starting up')],
    ['class 08 connection failure', pgError('08006')],
    ['class 08 cannot establish', pgError('08001')],
    ['too many connections', pgError('53300')],
    ['connection refused', socketError('ECONNREFUSED')],
    ['connection reset', socketError('ECONNRESET')],
    ['pg: connection terminated', new Error('Connection terminated unexpectedly')],
    ['pg: pool acquire timeout', new Error('timeout exceeded when trying to connect')],
    ['pg: broken client', new Error('Client has encountered a connection error and is not queryable')],
    ['Prisma P1001', Object.assign(new Error("Can't reach database server"), { code: 'P1001', name: 'PrismaClientKnownRequestError' })],
    ['Prisma P1017', Object.assign(new Error('Server has closed the connection.'), { code: 'P1017' })],
    ['Prisma P2024', Object.assign(new Error('Timed out fetching a new connection from the connection pool.'), { code: 'P2024' })],
    ['Prisma driver adapter', Object.assign(new Error('x'), { name: 'DriverAdapterError', cause: { kind: 'DatabaseNotReachable', host: '10.0.0.5' } })],
    ['Prisma known error holding the adapter error', Object.assign(new Error('x'), { code: 'P2010', meta: { driverAdapterError: { cause: { kind: 'ConnectionClosed' } } } })],
  ])('%s is postgres', (_name, err) => {
    expect(unavailableDependency(err)).toBe('postgres');
  });

  it('finds the database outage in a cause chain', () => {
    expect(unavailableDependency(new Error('loading the identity failed', { cause: socketError('ECONNREFUSED') }))).toBe('postgres');
  });

  it('knows Redis, NATS and unreachable gRPC servers', () => {
    expect(unavailableDependency(Object.assign(new Error('Reached the max retries per request limit (which is 1).'), { name: 'MaxRetriesPerRequestError' }))).toBe('redis');
    expect(unavailableDependency(new Error('Connection is closed.'))).toBe('redis');
    expect(unavailableDependency(new Error('Command timed out'))).toBe('redis');
    expect(unavailableDependency(Object.assign(new Error('CONNECTION_CLOSED'), { name: 'NatsError', code: 'CONNECTION_CLOSED' }))).toBe('nats');
    expect(unavailableDependency(Object.assign(new Error('bus disconnected'), { code: 'BUS_UNAVAILABLE' }))).toBe('nats');
    expect(unavailableDependency(Object.assign(new Error('No connection established'), { code: 14, details: 'x', metadata: new Metadata() }))).toBe('context');
  });

  it.each([
    ['a unique violation', pgError('23505')],
    ['a syntax error', pgError('42601')],
    ['a serialization failure', pgError('40001')],
    ['a plain error', new Error('boom')],
    ['a NATS timeout', Object.assign(new Error('TIMEOUT'), { name: 'NatsError', code: 'TIMEOUT' })],
    ['a string', 'ECONNREFUSED'],
    ['nothing', undefined],
  ])('%s is not an outage', (_name, err) => {
    expect(unavailableDependency(err)).toBeUndefined();
  });
});

describe('toApiError', () => {
  it('answers a dependency outage 503 SERVICE_UNAVAILABLE with no internal text on the wire', () => {
    const apiErr = toApiError(socketError('ECONNREFUSED'));
    expect([apiErr.status, apiErr.code, apiErr.dependency]).toEqual([503, 'SERVICE_UNAVAILABLE', 'postgres']);
    const wire = JSON.stringify(errorEnvelope(apiErr, 'req1'));
    expect(wire).not.toMatch(/10\.0\.0\.5|ECONNREFUSED|5432|postgres/);
    expect(apiErr.cause?.message).toContain('ECONNREFUSED');
  });

  it('keeps other unknown errors 500 UNHANDLED', () => {
    expect(toApiError(new Error('boom')).code).toBe('UNHANDLED');
  });
});

describe('DependencyMonitor', () => {
  it('logs one line when a dependency is lost and one when it is back, with the count of the outage', () => {
    const lines: string[] = [];
    const monitor = new DependencyMonitor((l) => lines.push(l));
    monitor.up('postgres');
    monitor.failed('postgres', 'ECONNREFUSED');
    for (let i = 0; i < 249; i++) monitor.failed('postgres', 'ECONNREFUSED');
    monitor.lost('nats', 'disconnected');
    monitor.failed('nats', 'held', 3);
    expect(monitor.isDown('postgres')).toBe(true);
    monitor.up('postgres');
    monitor.up('postgres');
    monitor.up('nats');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toBe('dependency postgres lost: ECONNREFUSED');
    expect(lines[1]).toBe('dependency nats lost: disconnected');
    expect(lines[2]).toMatch(/^dependency postgres back after \d+\.\d s; 250 failed or held back meanwhile$/);
    expect(lines[3]).toMatch(/^dependency nats back after \d+\.\d s; 3 failed or held back meanwhile$/);
    expect(monitor.isDown('postgres')).toBe(false);
  });
});
