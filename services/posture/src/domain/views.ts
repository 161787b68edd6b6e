import { formatTimestamp } from '@ziti/errors';
import type { PostureCheck, PostureCheckTypeRecord } from './model.js';

/**
 * Wire views of posture checks and their types (`postureCheck<Kind>Detail`,
 * `postureCheckTypeDetail`). Also the `detail` carried by posture check events and handed to the
 * policy context, which renders `/service-policies/{id}/posture-checks` from it.
 */

export function postureCheckDetail(c: PostureCheck): Record<string, unknown> {
  const base = {
    _links: { self: { href: `./posture-checks/${c.id}` } },
    createdAt: formatTimestamp(c.createdAt),
    id: c.id,
    name: c.name,
    roleAttributes: c.roleAttributes,
    tags: c.tags,
    typeId: c.data.typeId,
    updatedAt: formatTimestamp(c.updatedAt),
    version: c.version,
  };
  const d = c.data;
  switch (d.typeId) {
    case 'OS':
      return { ...base, operatingSystems: d.operatingSystems };
    case 'DOMAIN':
      return { ...base, domains: d.domains };
    case 'MAC':
      return { ...base, macAddresses: d.macAddresses };
    case 'PROCESS':
      return {
        ...base,
        process: { osType: d.process.osType, path: d.process.path, hashes: d.process.hashes, ...(d.process.signerFingerprint ? { signerFingerprint: d.process.signerFingerprint } : {}) },
      };
    case 'PROCESS_MULTI':
      return { ...base, semantic: d.semantic, processes: d.processes };
    case 'MFA':
      return {
        ...base,
        timeoutSeconds: d.timeoutSeconds,
        promptOnWake: d.promptOnWake,
        promptOnUnlock: d.promptOnUnlock,
        ignoreLegacyEndpoints: d.ignoreLegacyEndpoints,
      };
  }
}

export function postureCheckTypeDetail(t: PostureCheckTypeRecord): Record<string, unknown> {
  return {
    _links: { self: { href: `./posture-check-types/${t.id}` } },
    createdAt: formatTimestamp(t.createdAt),
    id: t.id,
    name: t.name,
    operatingSystems: t.operatingSystems,
    tags: {},
    updatedAt: formatTimestamp(t.updatedAt),
    version: '',
  };
}

/** The data of a posture check event (see PostureCheckEvent). */
export function eventData(c: PostureCheck, deleted = false): Record<string, unknown> {
  return {
    postureCheckId: c.id,
    name: c.name,
    typeId: c.data.typeId,
    roleAttributes: c.roleAttributes,
    updatedAt: formatTimestamp(c.updatedAt),
    createdAt: formatTimestamp(c.createdAt),
    version: c.version,
    detail: postureCheckDetail(c),
    ...(deleted ? { deleted: true } : {}),
  };
}
