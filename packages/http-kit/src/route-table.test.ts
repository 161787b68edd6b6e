import { type RouteDef, route } from '@ziti/api-contract';
import { ApiError } from '@ziti/errors';
import { RouteTable } from './route-table.js';

const r = (operationId: string, method: RouteDef['method'], path: string, apis: RouteDef['apis'] = ['client', 'management']) =>
  route({ operationId, method, path, apis, owner: 'identity-auth', access: 'anonymous', tags: [], summary: '', success: { status: 200 } });

const table = new RouteTable([
  r('listThings', 'GET', '/things'),
  r('createThing', 'POST', '/things'),
  r('detailThing', 'GET', '/things/{id}'),
  r('deleteThing', 'DELETE', '/things/{id}'),
  r('thingRoles', 'GET', '/things/roles'),
  r('nested', 'GET', '/things/{id}/parts/{partId}'),
  r('managementOnly', 'GET', '/admin', ['management']),
  r('summaryOfAny', 'GET', '/{kind}/summary'),
]);

function errorOf(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    return err as ApiError;
  }
  throw new Error('expected an error');
}

describe('RouteTable', () => {
  it('matches by path then verb, with decoded parameters', () => {
    expect(table.match('client', 'GET', '/things').route.operationId).toBe('listThings');
    expect(table.match('client', 'POST', '/things/').route.operationId).toBe('createThing');
    const m = table.match('client', 'GET', '/things/a%20b/parts/p1');
    expect(m.route.operationId).toBe('nested');
    expect(m.params).toEqual({ id: 'a b', partId: 'p1' });
  });

  it('prefers a static segment over a parameter', () => {
    expect(table.match('client', 'GET', '/things/roles').route.operationId).toBe('thingRoles');
    expect(table.match('client', 'GET', '/things/other').route.operationId).toBe('detailThing');
  });

  it('answers HEAD with the GET operation', () => {
    expect(table.match('client', 'HEAD', '/things').route.operationId).toBe('listThings');
  });

  it('is 404 NOT_FOUND for an unknown path and 405 METHOD_NOT_ALLOWED for a known path with another verb', () => {
    const notFound = errorOf(() => table.match('client', 'GET', '/nothing'));
    expect([notFound.status, notFound.code]).toEqual([404, 'NOT_FOUND']);
    const notAllowed = errorOf(() => table.match('client', 'PUT', '/things/x'));
    expect([notAllowed.status, notAllowed.code]).toEqual([405, 'METHOD_NOT_ALLOWED']);
  });

  it('tries templates that start with a parameter for every first segment', () => {
    const any = table.match('client', 'GET', '/widgets/summary');
    expect([any.route.operationId, any.params]).toEqual(['summaryOfAny', { kind: 'widgets' }]);
    expect(table.match('client', 'GET', '/things/summary').route.operationId).toBe('detailThing');
    expect(errorOf(() => table.match('client', 'POST', '/widgets/summary')).code).toBe('METHOD_NOT_ALLOWED');
  });

  it('keeps the two APIs apart', () => {
    expect(table.match('management', 'GET', '/admin').route.operationId).toBe('managementOnly');
    expect(errorOf(() => table.match('client', 'GET', '/admin')).code).toBe('NOT_FOUND');
  });
});
