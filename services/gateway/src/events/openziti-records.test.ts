import type { ChangeEvent } from '@ziti/messaging';
import { subscriptionsFor } from './event-stream.js';
import { authenticationRecords, entityCountRecord, sessionRecord, toRecords } from './openziti-records.js';

/**
 * The shapes follow the JSON tags of openziti/ziti controller/event: EntityChangeEvent
 * (`namespace`, `event_src_id`, `timestamp`, `eventId`, `eventType`, `metadata`, `entityType`,
 * `isParentEvent`, `initialState`, `finalState`), ApiSessionEvent (`event_type`, `id`, `type`,
 * `token`, `identity_id`, `ip_address`, `cert_generated`), SessionEvent (`event_type`,
 * `session_type`, `provider`, `id`, `api_session_id`, `identity_id`, `service_id`; `token`
 * omitempty), AuthenticationEvent (`event_type`, `type` (the method), `authenticator_id`,
 * `external_jwt_signer_id`, `identity_id`, `auth_policy_id`, `remote_address`, `success`,
 * `reason`, `improper_client_cert_chain`) and EntityCountEvent (`counts`, `error` omitempty).
 */

const src = { controllerId: 'ctrl-1', version: 'v1.2.3' };
const at = '2026-11-26T10:00:00.000Z';
const ev = (source: string, type: string, data: Record<string, unknown>, id = 'evt-1'): ChangeEvent => ({ id, source, type, occurredAt: at, data });
const head = (namespace: string) => ({ namespace, event_src_id: 'ctrl-1', timestamp: at });

const identity = {
  identityId: 'id1',
  name: 'laptop',
  roleAttributes: ['eng'],
  isAdmin: false,
  disabled: false,
  updatedAt: '2026-11-26T09:59:59.000Z',
  typeId: 'User',
  isDefaultAdmin: false,
  externalId: null,
  authPolicyId: 'default',
  createdAt: '2026-11-26T09:00:00.000Z',
  tags: { team: 'a' },
  tokenHashes: ['9f86d0'],
};
const identityState = {
  id: 'id1',
  createdAt: '2026-11-26T09:00:00.000Z',
  updatedAt: '2026-11-26T09:59:59.000Z',
  tags: { team: 'a' },
  isSystem: false,
  name: 'laptop',
  identityTypeId: 'User',
  isDefaultAdmin: false,
  isAdmin: false,
  roleAttributes: ['eng'],
  authPolicyId: 'default',
  externalId: null,
  disabled: false,
};

describe('entityChange', () => {
  it('an identity created: the change with its finalState, then committed', () => {
    expect(toRecords(ev('identity-auth', 'identity.created', identity), src)).toEqual([
      {
        ...head('entityChange'),
        eventId: 'evt-1',
        eventType: 'created',
        metadata: { version: 'v1.2.3' },
        entityType: 'identities',
        isParentEvent: false,
        finalState: identityState,
      },
      { ...head('entityChange'), eventId: 'evt-1', eventType: 'committed' },
    ]);
  });

  it('an identity disabled is an update; a delete carries the initialState (token hashes never leave)', () => {
    const [updated] = toRecords(ev('identity-auth', 'identity.disabled', { ...identity, disabled: true }), src);
    expect(updated).toMatchObject({ eventType: 'updated', finalState: { ...identityState, disabled: true } });
    const [deleted] = toRecords(ev('identity-auth', 'identity.deleted', { ...identity, deleted: true }), src);
    expect(deleted).toMatchObject({ eventType: 'deleted', entityType: 'identities', initialState: identityState });
    expect(deleted!.finalState).toBeUndefined();
    expect(JSON.stringify([updated, deleted])).not.toContain('9f86d0');
  });

  it('auth policies, CAs, posture checks and routers, by OpenZiti store name', () => {
    const one = (e: ChangeEvent) => toRecords(e, src)[0]!;
    expect(one(ev('identity-auth', 'auth-policy.updated', { authPolicyId: 'ap1', tokenHashes: [] }))).toMatchObject({
      entityType: 'authPolicies',
      eventType: 'updated',
      finalState: { id: 'ap1' },
    });
    expect(one(ev('pki-enrollment', 'ca.verified', { caId: 'ca1' }))).toMatchObject({ entityType: 'cas', eventType: 'updated', finalState: { id: 'ca1' } });
    expect(one(ev('pki-enrollment', 'ca.deleted', { caId: 'ca1' }))).toMatchObject({ entityType: 'cas', eventType: 'deleted', initialState: { id: 'ca1' } });
    expect(one(ev('policy', 'router.deleted', { routerId: 'r1', kind: 'edge' }))).toMatchObject({ entityType: 'edgeRouters', initialState: { id: 'r1' } });
    expect(one(ev('policy', 'router.deleted', { routerId: 'r2', kind: 'transit' }))).toMatchObject({ entityType: 'transitRouters' });
    expect(one(ev('policy', 'router.deleted', { routerId: 'r3', kind: 'fabric' }))).toMatchObject({ entityType: 'routers' });
    const check = one(
      ev('posture', 'posture-check.created', {
        postureCheckId: 'pc1',
        name: 'os',
        typeId: 'OS',
        detail: { id: 'pc1', name: 'os', typeId: 'OS', version: 1, _links: { self: { href: './posture-checks/pc1' } } },
      }),
    );
    expect(check).toMatchObject({ entityType: 'postureChecks', eventType: 'created', finalState: { id: 'pc1', name: 'os', typeId: 'OS', version: 1 } });
    expect(check.finalState).not.toHaveProperty('_links');
  });
});

describe('authentication and apiSession', () => {
  const success = {
    method: 'password',
    success: true,
    remoteAddress: '10.0.0.7',
    authenticatorId: 'au1',
    identityId: 'id1',
    authPolicyId: 'default',
    apiSessionId: 'as1',
    improperClientCertChain: false,
  };

  it('a success is an authentication record and the apiSession it created', () => {
    expect(authenticationRecords(src, new Date(at), success)).toEqual([
      {
        ...head('authentication'),
        event_type: 'success',
        type: 'password',
        authenticator_id: 'au1',
        external_jwt_signer_id: '',
        identity_id: 'id1',
        auth_policy_id: 'default',
        remote_address: '10.0.0.7',
        success: true,
        reason: '',
        improper_client_cert_chain: false,
      },
      {
        ...head('apiSession'),
        event_type: 'created',
        id: 'as1',
        type: 'legacy',
        token: '',
        identity_id: 'id1',
        ip_address: '10.0.0.7',
        cert_generated: false,
      },
    ]);
  });

  it('a failure says why, with the ids known when it failed', () => {
    const records = authenticationRecords(src, new Date(at), { method: 'ext-jwt', success: false, remoteAddress: '10.0.0.8', externalJwtSignerId: 's1', reason: 'identity not found' });
    expect(records).toEqual([
      {
        ...head('authentication'),
        event_type: 'fail',
        type: 'ext-jwt',
        authenticator_id: '',
        external_jwt_signer_id: 's1',
        identity_id: '',
        auth_policy_id: '',
        remote_address: '10.0.0.8',
        success: false,
        reason: 'identity not found',
        improper_client_cert_chain: false,
      },
    ]);
  });

  it('api-session.deleted is an apiSession deleted (its address unknown)', () => {
    expect(toRecords(ev('identity-auth', 'api-session.deleted', { apiSessionId: 'as1', identityId: 'id1', tokenHashes: ['x'] }), src)).toEqual([
      { ...head('apiSession'), event_type: 'deleted', id: 'as1', type: 'legacy', token: '', identity_id: 'id1', ip_address: '', cert_generated: false },
    ]);
    expect(toRecords(ev('identity-auth', 'api-session.updated', { apiSessionId: 'as1' }), src)).toEqual([]);
  });
});

describe('session and entityCount', () => {
  it('session created (handed back on the answer) and deleted (its event)', () => {
    const data = { sessionId: 's1', apiSessionId: 'as1', identityId: 'id1', serviceId: 'svc1', type: 'Bind' };
    const record = (action: string) => ({
      ...head('session'),
      event_type: action,
      session_type: 'Bind',
      provider: 'legacy',
      id: 's1',
      api_session_id: 'as1',
      identity_id: 'id1',
      service_id: 'svc1',
    });
    expect(sessionRecord({ event_src_id: 'ctrl-1', timestamp: at }, 'created', data)).toEqual(record('created'));
    expect(toRecords(ev('session', 'session.deleted', data), src)).toEqual([record('deleted')]);
  });

  it('entityCount: the counts, or the error', () => {
    expect(entityCountRecord(src, new Date(at), { counts: { identities: 3, controllers: 1 } })).toEqual({ ...head('entityCount'), counts: { identities: 3, controllers: 1 } });
    expect(entityCountRecord(src, new Date(at), { error: 'unavailable' })).toEqual({ ...head('entityCount'), error: 'unavailable' });
  });

  it('events no record is made from give none', () => {
    expect(toRecords(ev('policy', 'service-access.changed', { identityIds: ['a'] }), src)).toEqual([]);
    expect(toRecords(ev('posture', 'posture-data.changed', { identityId: 'a' }), src)).toEqual([]);
  });
});

describe('subscriptionsFor', () => {
  it('one subscription per source, only for the namespaces chosen', () => {
    expect(subscriptionsFor(['entityCount'])).toEqual([]);
    expect(subscriptionsFor(['session'])).toEqual([['session', ['session.deleted']]]);
    expect(subscriptionsFor(['authentication'])).toEqual([]);
    expect(subscriptionsFor(['apiSession', 'authentication', 'entityChange'])).toEqual([
      ['identity-auth', ['api-session.deleted', 'auth-policy.*', 'identity.*']],
      ['pki-enrollment', ['ca.deleted', 'ca.verified']],
      ['policy', ['router.deleted']],
      ['posture', ['posture-check.*']],
    ]);
  });
});
