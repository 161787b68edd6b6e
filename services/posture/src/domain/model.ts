/** Entities of the posture context. */

export type PostureCheckTypeId = 'OS' | 'PROCESS' | 'DOMAIN' | 'MAC' | 'MFA' | 'PROCESS_MULTI';
export const POSTURE_CHECK_TYPE_IDS: readonly PostureCheckTypeId[] = ['OS', 'PROCESS', 'DOMAIN', 'MAC', 'MFA', 'PROCESS_MULTI'];
export const OS_TYPES = ['Windows', 'WindowsServer', 'Android', 'iOS', 'Linux', 'macOS'] as const;

export interface OperatingSystem {
  type: string;
  versions: string[];
}

export interface ProcessSpec {
  osType: string;
  path: string;
  hashes: string[];
  signerFingerprint?: string;
}

export interface ProcessMultiSpec {
  osType: string;
  path: string;
  hashes: string[];
  signerFingerprints: string[];
}

/** The kind-specific fields of a posture check (its `data` column). */
export type PostureCheckData =
  | { typeId: 'OS'; operatingSystems: OperatingSystem[] }
  | { typeId: 'DOMAIN'; domains: string[] }
  | { typeId: 'MAC'; macAddresses: string[] }
  | { typeId: 'PROCESS'; process: ProcessSpec }
  | { typeId: 'PROCESS_MULTI'; semantic: 'AllOf' | 'AnyOf'; processes: ProcessMultiSpec[] }
  | { typeId: 'MFA'; timeoutSeconds: number; promptOnWake: boolean; promptOnUnlock: boolean; ignoreLegacyEndpoints: boolean };

export interface PostureCheck {
  id: string;
  name: string;
  roleAttributes: string[];
  tags: Record<string, unknown>;
  version: number;
  data: PostureCheckData;
  createdAt: Date;
  updatedAt: Date;
}

export interface PostureCheckTypeRecord {
  id: string;
  name: string;
  operatingSystems: OperatingSystem[];
  createdAt: Date;
  updatedAt: Date;
}

/** A list request as it arrives (ZitiQL filter, paging, sort). */
export interface ListRequest {
  filter?: string;
  limit?: string;
  offset?: string;
  sort?: string;
}

export interface Page<T> {
  items: T[];
  totalCount: number;
  limit: number;
  offset: number;
  filterableFields: string[];
}

/** `roleFilter` / `roleSemantic` of entity lists (§4.1). */
export interface RoleFilter {
  ids: string[];
  attributes: string[];
  all: boolean;
  semantic: 'AllOf' | 'AnyOf';
}

/** Seconds meaning "no timeout" (the controller's PostureCheckNoTimeout). */
export const NO_TIMEOUT = -1;
