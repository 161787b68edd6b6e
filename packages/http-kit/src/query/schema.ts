/**
 * What a filter may refer to: the public symbols of one entity type and how each maps to SQL.
 * Identifiers in the generated SQL come only from these definitions, never from the filter text.
 *
 * Every `alias` handed to `sql`/`elements` is an already quoted SQL alias (e.g. `"e"`), so a schema
 * writes `sql: (a) => \`${a}."created_at"\``.
 */

export type SymbolType = 'string' | 'int' | 'float' | 'bool' | 'datetime';

/** A scalar column. `sql(alias)` returns the SQL expression for the row aliased `alias`. */
export interface ScalarSymbol {
  kind: 'scalar';
  type: SymbolType;
  sql: (alias: string) => string;
  /** Whether `sort by` / the `sort` parameter may use it. Default true. */
  sortable?: boolean;
  /**
   * The column holds text in Unicode NFC (entity names, `normalizeName`): string literals compared
   * with it are NFC-normalised first, so `name = "cafe\u0301"` finds the stored "café". Only the
   * normal form changes (white space is kept: `name contains " x"` means what it says).
   */
  nfc?: boolean;
}

/**
 * A set (e.g. a roleAttributes text[] column, or ids linked through a join table).
 * `elements(alias)` is a SQL query yielding one row per element in a column named "v",
 * e.g. `SELECT unnest(${a}."role_attributes") AS v`.
 */
export interface SetSymbol {
  kind: 'set';
  /** The type of the elements. */
  type: SymbolType;
  elements: (alias: string) => string;
  /** When the elements are ids of another entity: that entity's name in the registry, enabling `from <symbol> where …`. */
  entity?: string;
}

/**
 * A jsonb map column such as tags: `tags.<key>` compares the key's value; the RHS type picks the comparison
 * (string → text, number → numeric when jsonb_typeof is number, bool → when jsonb_typeof is boolean,
 * null → key absent or JSON null). `tags.a.b` addresses the nested key path `{a,b}`.
 */
export interface MapSymbol {
  kind: 'map';
  sql: (alias: string) => string;
}

export type QuerySymbol = ScalarSymbol | SetSymbol | MapSymbol;

export interface EntityQuerySchema {
  /** e.g. 'identities' */
  entity: string;
  /** SQL table reference, e.g. '"identities"' (already quoted by the schema author). */
  table: string;
  /** The id column's name (unquoted), default 'id'. Sub-queries join on it; it is the final sort tie-breaker. */
  idColumn?: string;
  /** The PUBLIC symbols, e.g. id, name, createdAt, updatedAt, tags, isSystem, roleAttributes … */
  symbols: Record<string, QuerySymbol>;
}

/** Entities reachable by `from <setSymbol> where …` sub-queries, by entity name. */
export type SchemaRegistry = Record<string, EntityQuerySchema>;

/** The public symbol names of a schema, for meta.filterableFields. */
export function filterableFields(schema: EntityQuerySchema): string[] {
  return Object.keys(schema.symbols);
}

/** `schema.symbols[name]`, ignoring inherited properties (`constructor`, `__proto__` …). */
export function ownSymbol(schema: EntityQuerySchema, name: string): QuerySymbol | undefined {
  return Object.prototype.hasOwnProperty.call(schema.symbols, name) ? schema.symbols[name] : undefined;
}

/** Double-quotes an SQL identifier. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
