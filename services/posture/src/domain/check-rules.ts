import { strictPostureCheckBody } from '@ziti/api-contract/dist/models/posture.js';
import { ApiError } from '@ziti/errors';
import { normalizeName, validateBody } from '@ziti/http-kit';
import {
  OS_TYPES,
  POSTURE_CHECK_TYPE_IDS,
  type PostureCheck,
  type PostureCheckData,
  type PostureCheckTypeId,
  type ProcessMultiSpec,
} from './model.js';
import { rangeError } from './semver-range.js';

/**
 * Validation of posture check writes and their mapping to the stored shape. Bodies arrive checked
 * against the base model (`postureCheckCreate|Update|Patch`); here the `typeId` picks the kind,
 * the whole body is checked against that kind's model (fields it does not name are dropped), and the rules the
 * schema can not express (enums, OS version ranges, role attributes) are applied.
 */

export type Mode = 'Create' | 'Update' | 'Patch';
export type Body = Record<string, unknown>;

const oneOf = (field: string, values: readonly string[]) => `${field} in body should be one of [${values.join(' ')}]`;

/** The body's typeId as a posture check type (field error otherwise). */
export function typeIdOf(body: Body, fallback?: PostureCheckTypeId): PostureCheckTypeId {
  const typeId = body.typeId ?? fallback;
  if (typeId === undefined) throw ApiError.field('typeId', 'typeId in body is required');
  if (!POSTURE_CHECK_TYPE_IDS.includes(typeId as PostureCheckTypeId)) {
    throw ApiError.field('typeId', oneOf('typeId', POSTURE_CHECK_TYPE_IDS), typeId);
  }
  return typeId as PostureCheckTypeId;
}

/** Entity role attributes are plain strings; `#` and `@` are selector prefixes (§5.1). */
export function validateRoleAttributes(attrs: readonly string[]): string[] {
  for (const a of attrs) {
    if (a.startsWith('#') || a.startsWith('@')) throw ApiError.field('roleAttributes', `role attributes may not be prefixed with ${a[0]}`, a);
  }
  return [...new Set(attrs)];
}

function osType(field: string, value: unknown): string {
  if (!OS_TYPES.includes(value as (typeof OS_TYPES)[number])) throw ApiError.field(field, oneOf(field, OS_TYPES), value);
  return value as string;
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? (v as string[]) : [];
}

function multi(list: unknown): ProcessMultiSpec[] {
  return (list as Body[]).map((p, i) => ({
    osType: osType(`processes.${i}.osType`, p.osType),
    path: p.path as string,
    hashes: strings(p.hashes),
    signerFingerprints: strings(p.signerFingerprints),
  }));
}

/**
 * The kind-specific data of a body. `previous` (patch only) supplies the fields the body omits;
 * create and update take omitted optional fields as their defaults.
 */
function kindData(typeId: PostureCheckTypeId, body: Body, previous?: PostureCheckData): PostureCheckData {
  const prev = previous && previous.typeId === typeId ? (previous as Record<string, unknown>) : {};
  const pick = <T>(key: string, fallback: T): T => (body[key] !== undefined && body[key] !== null ? (body[key] as T) : ((prev[key] as T) ?? fallback));
  switch (typeId) {
    case 'OS': {
      const operatingSystems = pick<{ type: string; versions: string[] }[]>('operatingSystems', []).map((o, i) => ({
        type: osType(`operatingSystems.${i}.type`, o.type),
        versions: [...o.versions],
      }));
      for (const os of operatingSystems) {
        os.versions.forEach((v, idx) => {
          const err = rangeError(v);
          if (err) {
            const msg = `invalid version for os: [${os.type}], version: [${v}]: ${err}`;
            throw ApiError.field(`operatingSystems[${os.type}][${idx}]`, msg, v);
          }
        });
      }
      return { typeId, operatingSystems };
    }
    case 'DOMAIN':
      return { typeId, domains: [...pick<string[]>('domains', [])] };
    case 'MAC':
      return { typeId, macAddresses: [...pick<string[]>('macAddresses', [])] };
    case 'PROCESS': {
      const p = pick<Body>('process', {});
      const process = {
        osType: osType('process.osType', p.osType),
        path: (p.path as string) ?? '',
        hashes: strings(p.hashes),
        ...(typeof p.signerFingerprint === 'string' && p.signerFingerprint !== '' ? { signerFingerprint: p.signerFingerprint } : {}),
      };
      return { typeId, process };
    }
    case 'PROCESS_MULTI': {
      const semantic = pick<string>('semantic', 'AllOf');
      if (semantic !== 'AllOf' && semantic !== 'AnyOf') throw ApiError.field('semantic', oneOf('semantic', ['AllOf', 'AnyOf']), semantic);
      const processes = body.processes !== undefined && body.processes !== null ? multi(body.processes) : ((prev.processes as ProcessMultiSpec[]) ?? []);
      return { typeId, semantic, processes };
    }
    case 'MFA':
      return {
        typeId,
        timeoutSeconds: pick<number>('timeoutSeconds', -1),
        promptOnWake: pick<boolean>('promptOnWake', false),
        promptOnUnlock: pick<boolean>('promptOnUnlock', false),
        ignoreLegacyEndpoints: pick<boolean>('ignoreLegacyEndpoints', false),
      };
  }
}

/** The fields a write sets, validated. */
export interface CheckFields {
  name: string;
  roleAttributes: string[];
  tags: Record<string, unknown>;
  data: PostureCheckData;
}

/**
 * The name in its stored form (`normalizeName`: NFC, no surrounding white space; one name to the
 * unique index however it was typed). Missing, empty or only white space → 400 as a missing name.
 */
function nameOf(v: unknown): string {
  const normalized = typeof v === 'string' ? normalizeName(v) : '';
  if (normalized === '') throw ApiError.field('name', 'name in body is required', v ?? '');
  return normalized;
}

/** Create (`mode` Create) or replace (`mode` Update) every field. */
export function fieldsFor(mode: 'Create' | 'Update', body: Body, existing?: PostureCheck): CheckFields {
  const typeId = typeIdOf(body, existing?.data.typeId);
  if (existing && typeId !== existing.data.typeId) throw ApiError.field('typeId', 'typeId can not be changed', typeId);
  validateBody(strictPostureCheckBody(typeId, mode), body);
  return {
    name: nameOf(body.name),
    roleAttributes: validateRoleAttributes(strings(body.roleAttributes)),
    tags: (body.tags as Record<string, unknown> | null) ?? {},
    data: kindData(typeId, body),
  };
}

/** Patch: only the fields present in the body change. */
export function patchFields(body: Body, existing: PostureCheck): CheckFields {
  const typeId = typeIdOf(body, existing.data.typeId);
  if (typeId !== existing.data.typeId) throw ApiError.field('typeId', 'typeId can not be changed', typeId);
  validateBody(strictPostureCheckBody(typeId, 'Patch'), body);
  return {
    name: body.name !== undefined && body.name !== null ? nameOf(body.name) : existing.name,
    roleAttributes: body.roleAttributes !== undefined ? validateRoleAttributes(strings(body.roleAttributes)) : existing.roleAttributes,
    tags: body.tags !== undefined ? ((body.tags as Record<string, unknown> | null) ?? {}) : existing.tags,
    data: kindData(typeId, body, existing.data),
  };
}
