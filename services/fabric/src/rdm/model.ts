import type { RouterDataModel } from '@ziti/proto';

/**
 * The router data model (OpenZiti's RDM) as this context holds it: every entity by kind and id,
 * each with a canonical JSON text so two models diff by string comparison. Service policies' links
 * (the identities, services and posture checks they select) are entities of their own
 * (`policy-link`, id `<policyId>/<kind>/<relatedId>`), because routers learn them as
 * `ServicePolicyChange` add/remove events.
 */
export type EntityKind = 'configType' | 'config' | 'identity' | 'service' | 'postureCheck' | 'publicKey' | 'revocation' | 'servicePolicy' | 'policyLink';

/** The order of a full state and of the changes of one change set: what others refer to first. */
export const KIND_ORDER: readonly EntityKind[] = ['configType', 'config', 'identity', 'service', 'postureCheck', 'publicKey', 'revocation', 'servicePolicy', 'policyLink'];

export interface PolicyLink {
  policyId: string;
  related: 'service' | 'identity' | 'postureCheck';
  relatedId: string;
}

export interface PublicKeyEntity {
  kid: string;
  data: Buffer;
  /** 'x509' (a certificate, DER) or 'pkix' (SubjectPublicKeyInfo DER). */
  format: 'x509' | 'pkix';
  usages: ('jwt' | 'clientCert')[];
}

/** A revocation of OIDC tokens (identity-auth's), as routers check bearer tokens against it. */
export interface RevocationEntity {
  id: string;
  /** 'JTI', 'API_SESSION' or 'IDENTITY'. */
  type: string;
  expiresAtMs: number;
  /** 0 when unset. */
  issuedBeforeMs: number;
}

export interface ModelEntity {
  kind: EntityKind;
  id: string;
  /** The entity as the wire mapping takes it. */
  value: unknown;
  /** Canonical text of `value` (diffs compare it). */
  text: string;
}

export type Model = Map<string, ModelEntity>;

export interface ModelChange {
  action: 'create' | 'update' | 'delete';
  entity: ModelEntity;
}

const keyOf = (kind: EntityKind, id: string) => `${kind}:${id}`;

/** JSON with object keys sorted (maps from the wire arrive in any order). */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => {
    if (Buffer.isBuffer(v)) return v.toString('base64');
    if (v && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Uint8Array)) {
      return Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    }
    if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
    return v;
  });
}

function put(model: Model, kind: EntityKind, id: string, value: unknown): void {
  model.set(keyOf(kind, id), { kind, id, value, text: canonical(value) });
}

/** The whole model from policy's part, the public keys and the live revocations. */
export function buildModel(policy: RouterDataModel, keys: readonly PublicKeyEntity[], revocations: readonly RevocationEntity[] = []): Model {
  const model: Model = new Map();
  for (const t of policy.configTypes) put(model, 'configType', t.id, { id: t.id, name: t.name });
  for (const c of policy.configs) put(model, 'config', c.id, { id: c.id, typeId: c.typeId, name: c.name, dataJson: c.dataJson });
  for (const i of policy.identities) {
    const serviceConfigs = Object.fromEntries(Object.entries(i.serviceConfigs).map(([svc, sc]) => [svc, { ...sc.configs }]));
    put(model, 'identity', i.id, {
      id: i.id,
      name: i.name,
      disabled: i.disabled,
      defaultHostingPrecedence: i.defaultHostingPrecedence || 'default',
      defaultHostingCost: i.defaultHostingCost,
      serviceHostingPrecedences: { ...i.serviceHostingPrecedences },
      serviceHostingCosts: { ...i.serviceHostingCosts },
      appDataJson: i.appDataJson || '{}',
      serviceConfigs,
    });
  }
  for (const s of policy.services) put(model, 'service', s.id, { id: s.id, name: s.name, encryptionRequired: s.encryptionRequired, configs: [...s.configIds].sort() });
  for (const p of policy.postureChecks) {
    let detail: Record<string, unknown> = {};
    try {
      detail = JSON.parse(p.detailJson || '{}') as Record<string, unknown>;
    } catch {
      detail = {};
    }
    put(model, 'postureCheck', p.id, { id: p.id, name: p.name, typeId: p.typeId, detail });
  }
  for (const k of keys) put(model, 'publicKey', k.kid, k);
  for (const r of revocations) put(model, 'revocation', r.id, { id: r.id, type: r.type, expiresAtMs: r.expiresAtMs, issuedBeforeMs: r.issuedBeforeMs } satisfies RevocationEntity);
  for (const p of policy.servicePolicies) {
    put(model, 'servicePolicy', p.id, { id: p.id, name: p.name, policyType: p.policyType });
    const link = (related: PolicyLink['related'], ids: readonly string[]) => {
      for (const relatedId of ids) put(model, 'policyLink', `${p.id}/${related}/${relatedId}`, { policyId: p.id, related, relatedId } satisfies PolicyLink);
    };
    link('identity', p.identityIds);
    link('service', p.serviceIds);
    link('postureCheck', p.postureCheckIds);
  }
  return model;
}

const rank = (kind: EntityKind) => KIND_ORDER.indexOf(kind);

/** Entities of a model in full-state order. */
export function orderedEntities(model: Model): ModelEntity[] {
  return [...model.values()].sort((a, b) => rank(a.kind) - rank(b.kind));
}

/**
 * What changed from `before` to `after`: creates and updates in dependency order, then deletes in
 * reverse order (links before policies, policies before what they select). Public keys are left
 * out when `withKeys` is false (they travel in synthetic change sets).
 */
export function diffModels(before: Model, after: Model, withKeys = true, keys: Iterable<string> = new Set([...before.keys(), ...after.keys()])): ModelChange[] {
  const upserts: ModelChange[] = [];
  const deletes: ModelChange[] = [];
  for (const key of keys) {
    const e = after.get(key);
    const old = before.get(key);
    if (!withKeys && (e ?? old)?.kind === 'publicKey') continue;
    if (e && !old) upserts.push({ action: 'create', entity: e });
    else if (e && old && old.text !== e.text) upserts.push({ action: e.kind === 'policyLink' ? 'create' : 'update', entity: e });
    else if (!e && old) deletes.push({ action: 'delete', entity: old });
  }
  upserts.sort((a, b) => rank(a.entity.kind) - rank(b.entity.kind));
  deletes.sort((a, b) => rank(b.entity.kind) - rank(a.entity.kind));
  return [...upserts, ...deletes];
}

/** The public keys of a model. */
export function publicKeysOf(model: Model): ModelEntity[] {
  return [...model.values()].filter((e) => e.kind === 'publicKey');
}

/** The `router-data-model.changed` kinds, as the model names them and as a partial read names them. */
export const CHANGE_KINDS = {
  'config-type': { kind: 'configType', field: 'configTypeIds' },
  config: { kind: 'config', field: 'configIds' },
  service: { kind: 'service', field: 'serviceIds' },
  'service-policy': { kind: 'servicePolicy', field: 'servicePolicyIds' },
  identity: { kind: 'identity', field: 'identityIds' },
  'posture-check': { kind: 'postureCheck', field: 'postureCheckIds' },
} as const satisfies Record<string, { kind: EntityKind; field: string }>;

export type ChangeKind = keyof typeof CHANGE_KINDS;

/** identity-auth's `revocation.created`, as a change names it (read with `ListRevocations`, not from policy). */
export const REVOCATION_CHANGE = 'revocation';

/**
 * `base` with the named entities replaced by what a partial read answered (`fresh`; one named but
 * not answered is gone; a service policy's links go with it), and the keys that may have changed.
 */
export function patchModel(base: Model, named: ReadonlyMap<EntityKind, ReadonlySet<string>>, fresh: Model): { model: Model; touched: Set<string> } {
  const model: Model = new Map(base);
  const touched = new Set<string>();
  for (const [kind, ids] of named) for (const id of ids) if (model.delete(keyOf(kind, id))) touched.add(keyOf(kind, id));
  const policies = named.get('servicePolicy');
  if (policies && policies.size > 0) {
    for (const [key, e] of model) {
      if (e.kind === 'policyLink' && policies.has((e.value as PolicyLink).policyId)) {
        model.delete(key);
        touched.add(key);
      }
    }
  }
  for (const [key, e] of fresh) {
    model.set(key, e);
    touched.add(key);
  }
  return { model, touched };
}
