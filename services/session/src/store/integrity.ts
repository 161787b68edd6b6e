import type { ReferenceColumn } from '@ziti/service-kit';

/** The columns of the session context that hold other contexts' ids, for the data integrity check. */
export const REFERENCE_COLUMNS: readonly ReferenceColumn[] = [
  { kind: 'api-session', table: 'sessions', idColumn: 'id', refColumn: 'api_session_id', ageColumn: 'created_at', noun: 'session' },
  { kind: 'identity', table: 'sessions', idColumn: 'id', refColumn: 'identity_id', ageColumn: 'created_at', noun: 'session' },
  { kind: 'service', table: 'sessions', idColumn: 'id', refColumn: 'service_id', ageColumn: 'created_at', noun: 'session' },
  {
    kind: 'identity',
    table: 'identity_service_updates',
    idColumn: 'identity_id',
    refColumn: 'identity_id',
    ageColumn: 'last_change_at',
    noun: 'service-update time',
  },
];
