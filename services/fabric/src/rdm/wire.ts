import { edgeCtrlPb } from '@ziti/channel';
import type { ChangeSet } from './publisher.js';
import type { ModelChange, ModelEntity, PolicyLink, PublicKeyEntity, RevocationEntity } from './model.js';

const ACTION = { create: edgeCtrlPb.DataState_Action.Create, update: edgeCtrlPb.DataState_Action.Update, delete: edgeCtrlPb.DataState_Action.Delete } as const;

const precedence = (p: unknown): edgeCtrlPb.TerminatorPrecedence => (p === 'required' ? edgeCtrlPb.TerminatorPrecedence.Required : p === 'failed' ? edgeCtrlPb.TerminatorPrecedence.Failed : edgeCtrlPb.TerminatorPrecedence.Default);
const strs = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const rec = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

function processOf(p: Record<string, unknown>): edgeCtrlPb.DataState_PostureCheck_Process {
  const prints = strs(p.signerFingerprints);
  return { OsType: str(p.osType), Path: str(p.path), Hashes: strs(p.hashes), Fingerprints: prints.length ? prints : p.signerFingerprint ? [str(p.signerFingerprint)] : [] };
}

/** A posture check as the management API renders it, in the RDM's shape (one subtype by kind). */
export function postureCheckOf(v: { id: string; name: string; typeId: string; detail: Record<string, unknown> }): edgeCtrlPb.DataState_PostureCheck {
  const d = v.detail;
  const out: edgeCtrlPb.DataState_PostureCheck = { id: v.id, name: v.name, typeId: v.typeId };
  switch (v.typeId) {
    case 'MAC':
      out.mac = { macAddresses: strs(d.macAddresses) };
      break;
    case 'DOMAIN':
      out.domains = { domains: strs(d.domains) };
      break;
    case 'OS':
      out.osList = { osList: (Array.isArray(d.operatingSystems) ? d.operatingSystems : []).map((o) => ({ OsType: str(rec(o).type), OsVersions: strs(rec(o).versions) })) };
      break;
    case 'PROCESS':
      out.process = processOf(rec(d.process));
      break;
    case 'PROCESS_MULTI':
      out.processMulti = { semantic: str(d.semantic) || 'AllOf', processes: (Array.isArray(d.processes) ? d.processes : []).map((p) => processOf(rec(p))) };
      break;
    case 'MFA':
      out.mfa = {
        TimeoutSeconds: typeof d.timeoutSeconds === 'number' ? d.timeoutSeconds : -1,
        PromptOnWake: d.promptOnWake === true,
        PromptOnUnlock: d.promptOnUnlock === true,
        IgnoreLegacyEndpoints: d.ignoreLegacyEndpoints === true,
      };
      break;
  }
  return out;
}

/** One model entity as an RDM event. */
export function eventOf(action: ModelChange['action'], e: ModelEntity, synthetic = false): edgeCtrlPb.DataState_Event {
  const ev: edgeCtrlPb.DataState_Event = { action: ACTION[action], isSynthetic: synthetic };
  const v = e.value as Record<string, unknown>;
  switch (e.kind) {
    case 'configType':
      ev.configType = { id: str(v.id), name: str(v.name) };
      break;
    case 'config':
      ev.config = { id: str(v.id), typeId: str(v.typeId), name: str(v.name), dataJson: str(v.dataJson) };
      break;
    case 'identity': {
      const hostPrec = rec(v.serviceHostingPrecedences);
      ev.identity = {
        id: str(v.id),
        name: str(v.name),
        disabled: v.disabled === true,
        defaultHostingPrecedence: precedence(v.defaultHostingPrecedence),
        defaultHostingCost: Number(v.defaultHostingCost) || 0,
        serviceHostingPrecedences: Object.fromEntries(Object.entries(hostPrec).map(([k, p]) => [k, precedence(p)])),
        serviceHostingCosts: rec(v.serviceHostingCosts) as Record<string, number>,
        appDataJson: Buffer.from(str(v.appDataJson) || '{}'),
        serviceConfigs: Object.fromEntries(Object.entries(rec(v.serviceConfigs)).map(([svc, c]) => [svc, { configs: rec(c) as Record<string, string> }])),
      };
      break;
    }
    case 'service':
      ev.service = { id: str(v.id), name: str(v.name), encryptionRequired: v.encryptionRequired === true, configs: strs(v.configs) };
      break;
    case 'postureCheck':
      ev.postureCheck = postureCheckOf({ id: str(v.id), name: str(v.name), typeId: str(v.typeId), detail: rec(v.detail) });
      break;
    case 'publicKey': {
      const k = e.value as PublicKeyEntity;
      ev.publicKey = {
        data: k.data,
        kid: k.kid,
        format: k.format === 'x509' ? edgeCtrlPb.DataState_PublicKey_Format.X509CertDer : edgeCtrlPb.DataState_PublicKey_Format.PKIXPublicKey,
        usages: k.usages.map((u) => (u === 'jwt' ? edgeCtrlPb.DataState_PublicKey_Usage.JWTValidation : edgeCtrlPb.DataState_PublicKey_Usage.ClientX509CertValidation)),
      };
      break;
    }
    case 'revocation': {
      const r = e.value as RevocationEntity;
      ev.revocation = { id: r.id, type: r.type, ExpiresAt: new Date(r.expiresAtMs), issuedBefore: r.issuedBeforeMs > 0 ? new Date(r.issuedBeforeMs) : undefined };
      break;
    }
    case 'servicePolicy':
      ev.servicePolicy = { id: str(v.id), name: str(v.name), policyType: v.policyType === 'Bind' ? edgeCtrlPb.PolicyType.BindPolicy : edgeCtrlPb.PolicyType.DialPolicy };
      break;
    case 'policyLink': {
      const l = e.value as PolicyLink;
      const related =
        l.related === 'identity' ? edgeCtrlPb.ServicePolicyRelatedEntityType.RelatedIdentity : l.related === 'service' ? edgeCtrlPb.ServicePolicyRelatedEntityType.RelatedService : edgeCtrlPb.ServicePolicyRelatedEntityType.RelatedPostureCheck;
      // A link is never updated: it is added or removed (the action of the event stays Create).
      ev.action = edgeCtrlPb.DataState_Action.Create;
      ev.servicePolicyChange = { policyId: l.policyId, relatedEntityIds: [l.relatedId], relatedEntityType: related, add: action !== 'delete' };
      break;
    }
  }
  return ev;
}

/** Events of changes, a policy's links of one kind and direction merged into one ServicePolicyChange. */
export function eventsOf(changes: readonly ModelChange[], synthetic = false): edgeCtrlPb.DataState_Event[] {
  const out: edgeCtrlPb.DataState_Event[] = [];
  let last: { key: string; ev: edgeCtrlPb.DataState_Event } | undefined;
  for (const c of changes) {
    if (c.entity.kind === 'policyLink') {
      const l = c.entity.value as PolicyLink;
      const key = `${l.policyId}/${l.related}/${c.action === 'delete'}`;
      if (last?.key === key && last.ev.servicePolicyChange) {
        last.ev.servicePolicyChange.relatedEntityIds.push(l.relatedId);
        continue;
      }
      const ev = eventOf(c.action, c.entity, synthetic);
      last = { key, ev };
      out.push(ev);
      continue;
    }
    last = undefined;
    out.push(eventOf(c.action, c.entity, synthetic));
  }
  return out;
}

/** A full state: every entity as a Create event. */
export function encodeDataState(entities: ModelEntity[], endIndex: number, timelineId: string): Uint8Array {
  return edgeCtrlPb.DataState.encode({ events: eventsOf(entities.map((entity) => ({ action: 'create', entity }))), endIndex, timelineId, caches: {} }).finish();
}

export function encodeChangeSet(set: ChangeSet): Uint8Array {
  return edgeCtrlPb.DataState_ChangeSet.encode({
    index: set.index,
    isSynthetic: set.synthetic,
    previousIndex: set.previousIndex,
    timestampId: '',
    changes: eventsOf(set.changes, set.synthetic),
  }).finish();
}
