import type { ReferenceColumn } from '@ziti/service-kit';

/**
 * The columns of pki-enrollment that hold other contexts' ids (identity-auth's identities and API
 * sessions, policy's routers), for the data integrity check.
 */
export const REFERENCE_COLUMNS: readonly ReferenceColumn[] = [
  { kind: 'identity', table: 'enrollments', idColumn: 'id', refColumn: 'identity_id', ageColumn: 'created_at', noun: 'enrollment' },
  { kind: 'identity', table: 'api_session_certificates', idColumn: 'id', refColumn: 'identity_id', ageColumn: 'created_at', noun: 'API session certificate' },
  { kind: 'api-session', table: 'api_session_certificates', idColumn: 'id', refColumn: 'api_session_id', ageColumn: 'created_at', noun: 'API session certificate' },
  { kind: 'router', table: 'enrollments', idColumn: 'id', refColumn: 'edge_router_id', ageColumn: 'created_at', noun: 'edge router enrollment' },
  { kind: 'router', table: 'enrollments', idColumn: 'id', refColumn: 'transit_router_id', ageColumn: 'created_at', noun: 'transit router enrollment' },
  { kind: 'router', table: 'router_certs', idColumn: 'router_id', refColumn: 'router_id', ageColumn: 'created_at', noun: 'router certificate' },
];

/** The CAs among `ids` that exist. */
export async function existingCas(sql: { query(text: string, params?: unknown[]): Promise<{ rows: any[] }> }, ids: readonly string[]): Promise<string[]> {
  const { rows } = await sql.query(`SELECT "id" FROM "cas" WHERE "id" = ANY($1::text[])`, [ids]);
  return rows.map((r) => r.id as string);
}
