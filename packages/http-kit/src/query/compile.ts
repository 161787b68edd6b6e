import type { ZitiQlBoolExpr, ZitiQlOperator, ZitiQlQuery, ZitiQlSetExpr, ZitiQlValue } from './ast.js';
import { nfc } from '../names.js';
import { invalidFilter, misuse } from './errors.js';
import {
  type EntityQuerySchema,
  type MapSymbol,
  type SchemaRegistry,
  type SetSymbol,
  type SymbolType,
  ownSymbol,
  quoteIdent,
} from './schema.js';

/*
 * SQL semantics, chosen to give two-valued logic over nullable columns:
 * - A comparison with a NULL column is false: `name = "x"`, `name < "x"`, `name in [...]`,
 *   `name contains "x"`, `name between …` do not match rows where name is NULL.
 * - Negated operators are exactly the negation of their positive forms, so they DO match NULL:
 *   `!=` compiles to IS DISTINCT FROM, and `not in` / `not contains` / `not icontains` /
 *   `not between` to `(<positive>) IS NOT TRUE`. `not <expr>` likewise is `(<expr>) IS NOT TRUE`
 *   (or `NOT (…)` when the expression can never be NULL).
 * - `= null` / `!= null` are IS NULL / IS NOT NULL.
 * - `contains` is `strpos(col, $n) > 0` (never LIKE, so `%` and `_` are literal); `icontains`
 *   compares lower() of both sides.
 * - `anyOf(s) op v` is EXISTS over the elements; `not anyOf(s) op v` therefore means "none".
 *   `allOf(s) op v` is NOT EXISTS an element for which the comparison is not true, so it is
 *   vacuously true for an empty set, as the controller's is.
 * - Every value is a bound parameter with an explicit cast (::text, ::bigint, ::double precision,
 *   ::numeric for map values, ::boolean, ::timestamptz); datetimes are bound as JS Dates (millisecond
 *   precision), int64 literals beyond 2^53 as their decimal text.
 * - Sub-queries (`from X where q`) honour their own `skip`/`limit` as written (negative limit or
 *   `limit none` = no limit); their `sort by` is checked but has no effect on count/isEmpty.
 */

export interface CompileOptions {
  /** Alias of the filtered row, a plain SQL identifier (default 'e'). */
  alias?: string;
  registry?: SchemaRegistry;
  /** The first placeholder is $(paramOffset+1). */
  paramOffset?: number;
}

interface Ctx {
  params: unknown[];
  paramOffset: number;
  registry: SchemaRegistry;
  baseAlias: string;
  aliases: number;
}

interface Scope {
  schema: EntityQuerySchema;
  /** Quoted alias of the current row. */
  alias: string;
}

/**
 * An SQL boolean expression; `nullable` when it may evaluate to NULL; `atomic` when it needs no
 * parentheses; `negated`, when set, its simpler negation (EXISTS ↔ NOT EXISTS).
 * Non-atomic expressions are comparisons, which bind tighter than AND/OR but not than IS.
 */
interface Sql {
  sql: string;
  nullable: boolean;
  atomic?: boolean;
  negated?: string;
}

const ALIAS = /^[A-Za-z_][A-Za-z0-9_]{0,40}$/;
/** The comparison types: the symbol types, plus numeric for JSON numbers in maps (any magnitude). */
type CompareType = SymbolType | 'numeric';
const CAST: Record<CompareType, string> = {
  string: '::text',
  int: '::bigint',
  float: '::double precision',
  numeric: '::numeric',
  bool: '::boolean',
  datetime: '::timestamptz',
};
const ORDERED: ZitiQlOperator[] = ['=', '!=', '<', '<=', '>', '>=', 'in', 'not in', 'between', 'not between'];

/** The compile state of one statement: parameters are numbered in the order they are bound. */
export function newContext(opts: CompileOptions = {}): { ctx: Ctx; scope: (schema: EntityQuerySchema) => Scope } {
  const alias = opts.alias ?? 'e';
  if (!ALIAS.test(alias)) throw misuse(`invalid SQL alias for a query: ${alias}`);
  const paramOffset = opts.paramOffset ?? 0;
  if (!Number.isSafeInteger(paramOffset) || paramOffset < 0) throw misuse(`invalid paramOffset: ${paramOffset}`);
  const ctx: Ctx = { params: [], paramOffset, registry: opts.registry ?? {}, baseAlias: alias, aliases: 0 };
  return { ctx, scope: (schema) => ({ schema, alias: quoteIdent(alias) }) };
}

/**
 * The WHERE expression of a parsed statement ('TRUE' without a filter). Its `sort by` fields are
 * checked against the schema (INVALID_FILTER) but not applied; skip and limit are ignored here.
 */
export function compileWhere(query: ZitiQlQuery, scope: Scope, ctx: Ctx): string {
  for (const f of query.sort ?? []) {
    const r = sortFieldSql(scope.schema, f.field, scope.alias);
    if (typeof r !== 'string') throw invalidFilter(r.error);
  }
  return query.filter ? boolSql(query.filter, scope, ctx).sql : 'TRUE';
}

/** The SQL of a sort field, or an error message when the field may not be sorted on. */
export function sortFieldSql(schema: EntityQuerySchema, field: string, alias: string): string | { error: string } {
  const sym = ownSymbol(schema, field);
  if (!sym) return { error: `unknown symbol '${field}'` };
  if (sym.kind !== 'scalar') return { error: `symbol '${field}' is a ${sym.kind} symbol and can not be sorted on` };
  if (sym.sortable === false) return { error: `symbol '${field}' can not be sorted on` };
  return sym.sql(alias);
}

function bind(ctx: Ctx, value: unknown, cast: string): string {
  return `$${ctx.paramOffset + ctx.params.push(value)}${cast}`;
}

function fresh(ctx: Ctx, kind: 'set' | 'entity'): string {
  ctx.aliases++;
  return quoteIdent(kind === 'set' ? `${ctx.baseAlias}_s${ctx.aliases}` : `${ctx.baseAlias}${ctx.aliases}`);
}

function group(s: Sql): string {
  return s.atomic ? s.sql : `(${s.sql})`;
}

function not(s: Sql): Sql {
  if (s.negated !== undefined) return { sql: s.negated, nullable: false, negated: s.sql };
  return { sql: s.nullable ? `${group(s)} IS NOT TRUE` : `NOT ${group(s)}`, nullable: false };
}

function boolSql(e: ZitiQlBoolExpr, scope: Scope, ctx: Ctx): Sql {
  switch (e.kind) {
    case 'and':
    case 'or': {
      const parts = e.operands.map((o) => boolSql(o, scope, ctx));
      const sql = parts.map((p) => p.sql).join(e.kind === 'and' ? ' AND ' : ' OR ');
      return { sql: `(${sql})`, nullable: parts.some((p) => p.nullable), atomic: true };
    }
    case 'not':
      return not(boolSql(e.operand, scope, ctx));
    case 'const':
      return { sql: e.value ? 'TRUE' : 'FALSE', nullable: false, atomic: true };
    case 'boolSymbol':
      return compareSymbol(e.name, '=', [{ type: 'bool', value: true }], scope, ctx, true);
    case 'isEmpty': {
      const elements = setSource(e.set, 'isEmpty', scope, ctx);
      return { sql: `NOT EXISTS (${elements})`, nullable: false, negated: `EXISTS (${elements})` };
    }
    case 'compare': {
      const { lhs, op, values } = e;
      if (lhs.kind === 'symbol') return compareSymbol(lhs.name, op, values, scope, ctx, false);
      if (lhs.kind === 'count') {
        const a = fresh(ctx, 'set');
        const target = `(SELECT count(*) FROM (${setSource(lhs.set, 'count', scope, ctx)}) AS ${a})`;
        return compareScalar(target, 'int', `count(${setName(lhs.set)})`, op, values, ctx, false);
      }
      const set = setSymbol(lhs.name, scope, lhs.kind);
      const a = fresh(ctx, 'set');
      const cmp = compareScalar(`${a}."v"`, set.type, lhs.name, op, values, ctx, true);
      const from = `SELECT 1 FROM (${set.elements(scope.alias)}) AS ${a} WHERE `;
      if (lhs.kind === 'anyOf') {
        const match = `${from}${cmp.sql}`;
        return { sql: `EXISTS (${match})`, nullable: false, negated: `NOT EXISTS (${match})` };
      }
      const violation = `${from}${group(cmp)} IS NOT TRUE`;
      return { sql: `NOT EXISTS (${violation})`, nullable: false, negated: `EXISTS (${violation})` };
    }
  }
}

function setName(set: ZitiQlSetExpr): string {
  return set.kind === 'symbol' ? set.name : `from ${set.name}`;
}

function unknownSymbol(name: string): Error {
  return invalidFilter(`unknown symbol '${name}'`);
}

function setSymbol(name: string, scope: Scope, fn: string): SetSymbol {
  const sym = ownSymbol(scope.schema, name);
  if (!sym) throw unknownSymbol(name);
  if (sym.kind !== 'set') throw invalidFilter(`symbol '${name}' is not a set symbol but is used in set function ${fn}`);
  return sym;
}

/** A SELECT yielding the set's elements as column "v": the symbol's elements, or a sub-query's matching ids. */
function setSource(set: ZitiQlSetExpr, fn: 'count' | 'isEmpty', scope: Scope, ctx: Ctx): string {
  if (set.kind === 'symbol') return setSymbol(set.name, scope, fn).elements(scope.alias);
  const sym = setSymbol(set.name, scope, 'from');
  const target = sym.entity !== undefined && Object.prototype.hasOwnProperty.call(ctx.registry, sym.entity)
    ? ctx.registry[sym.entity]
    : undefined;
  if (!target) throw invalidFilter(`symbol '${set.name}' does not support sub-queries`);
  const s = fresh(ctx, 'set');
  const inner: Scope = { schema: target, alias: fresh(ctx, 'entity') };
  const where = compileWhere(set.query, inner, ctx);
  const id = `${inner.alias}.${quoteIdent(target.idColumn ?? 'id')}`;
  let sql = `SELECT ${s}."v" AS v FROM (${sym.elements(scope.alias)}) AS ${s} JOIN ${target.table} AS ${inner.alias} ON ${id} = ${s}."v" WHERE ${where}`;
  const { limit, skip } = set.query;
  const cap = (n: number) => Math.min(n, Number.MAX_SAFE_INTEGER);
  if (typeof limit === 'number' && limit >= 0) sql += ` LIMIT ${bind(ctx, cap(limit), '::bigint')}`;
  if (skip !== undefined && skip > 0) sql += ` OFFSET ${bind(ctx, cap(skip), '::bigint')}`;
  return sql;
}

function compareSymbol(
  name: string,
  op: ZitiQlOperator,
  values: ZitiQlValue[],
  scope: Scope,
  ctx: Ctx,
  bare: boolean,
): Sql {
  const sym = ownSymbol(scope.schema, name);
  if (sym?.kind === 'set') throw invalidFilter(`symbol '${name}' is a set symbol but is used in non-set function context`);
  if (sym?.kind === 'map') throw invalidFilter(`symbol '${name}' is a map symbol and is used without a key, e.g. ${name}.key`);
  if (sym) {
    if (bare && sym.type !== 'bool') throw invalidFilter(`symbol '${name}' of type ${sym.type} is used as a boolean expression`);
    const literals = sym.nfc ? values.map((v) => (v.type === 'string' ? { ...v, value: nfc(v.value) } : v)) : values;
    return compareScalar(sym.sql(scope.alias), sym.type, name, op, literals, ctx, true);
  }
  const dot = name.indexOf('.');
  const map = dot > 0 ? ownSymbol(scope.schema, name.slice(0, dot)) : undefined;
  if (map?.kind !== 'map') throw unknownSymbol(name);
  return compareMapKey(map, name, name.slice(dot + 1).split('.'), op, values, scope, ctx);
}

function compareMapKey(
  map: MapSymbol,
  name: string,
  path: string[],
  op: ZitiQlOperator,
  values: ZitiQlValue[],
  scope: Scope,
  ctx: Ctx,
): Sql {
  const type = values[0]!.type;
  if (type === 'datetime') throw invalidFilter(`symbol '${name}' is a map value and can not be compared with a datetime`);
  const col = map.sql(scope.alias);
  const key = bind(ctx, path, '::text[]');
  const json = `(${col} #> ${key})`;
  const text = `(${col} #>> ${key})`;
  if (type === 'null') {
    return { sql: `COALESCE(jsonb_typeof(${json}), 'null') ${op === '=' ? '=' : '<>'} 'null'`, nullable: false };
  }
  if (type === 'string' || op.includes('contains')) return compareScalar(text, 'string', name, op, values, ctx, true);
  if (type === 'number') {
    const num = `(CASE WHEN jsonb_typeof(${json}) = 'number' THEN ${text}::numeric END)`;
    return compareScalar(num, 'numeric', name, op, values, ctx, true);
  }
  const bool = `(CASE WHEN jsonb_typeof(${json}) = 'boolean' THEN ${text}::boolean END)`;
  return compareScalar(bool, 'bool', name, op, values, ctx, true);
}

/** A bound value converted to the symbol's type (int converts to float, numbers to string). */
function param(v: ZitiQlValue, type: CompareType, name: string, ctx: Ctx): string {
  const mismatch = () => invalidFilter(`symbol '${name}' has type ${type} and can not be compared with a ${v.type} value`);
  switch (type) {
    case 'string':
      if (v.type === 'string') return bind(ctx, v.value, CAST.string);
      if (v.type === 'number') return bind(ctx, v.text, CAST.string);
      throw mismatch();
    case 'int':
    case 'float':
    case 'numeric':
      if (v.type !== 'number') throw mismatch();
      if (type === 'numeric') return bind(ctx, v.isInt ? v.text : v.value, CAST.numeric);
      if (type === 'int' && v.isInt) return bind(ctx, Number.isSafeInteger(v.value) ? v.value : v.text, CAST.int);
      return bind(ctx, v.value, CAST.float);
    case 'bool':
      if (v.type !== 'bool') throw mismatch();
      return bind(ctx, v.value, CAST.bool);
    case 'datetime':
      if (v.type !== 'datetime') throw mismatch();
      return bind(ctx, v.value, CAST.datetime);
  }
}

/** `target op values` for a target of the given type; `nullable` says whether target may be NULL. */
function compareScalar(
  target: string,
  type: CompareType,
  name: string,
  op: ZitiQlOperator,
  values: ZitiQlValue[],
  ctx: Ctx,
  nullable: boolean,
): Sql {
  if (values[0]!.type === 'null') {
    if (!nullable) throw invalidFilter(`${name} can not be compared with null`);
    return { sql: `${target} ${op === '=' ? 'IS NULL' : 'IS NOT NULL'}`, nullable: false };
  }
  const allowed = type === 'string' || (type === 'bool' ? op === '=' || op === '!=' : ORDERED.includes(op));
  if (!allowed) throw invalidFilter(`operator ${op} is not supported for symbol '${name}' of type ${type}`);
  const p = values.map((v) => param(v, type, name, ctx));
  const positive = (sql: string): Sql => ({ sql, nullable });
  switch (op) {
    case '=':
    case '<':
    case '<=':
    case '>':
    case '>=':
      return positive(`${target} ${op} ${p[0]}`);
    case '!=':
      return { sql: `${target} IS DISTINCT FROM ${p[0]}`, nullable: false };
    case 'in':
      return positive(`${target} IN (${p.join(', ')})`);
    case 'not in':
      return not(positive(`${target} IN (${p.join(', ')})`));
    case 'between':
      return { sql: `(${target} >= ${p[0]} AND ${target} < ${p[1]})`, nullable, atomic: true };
    case 'not between':
      return not({ sql: `(${target} >= ${p[0]} AND ${target} < ${p[1]})`, nullable, atomic: true });
    case 'contains':
      return positive(`strpos(${target}, ${p[0]}) > 0`);
    case 'not contains':
      return not(positive(`strpos(${target}, ${p[0]}) > 0`));
    case 'icontains':
      return positive(`strpos(lower(${target}), lower(${p[0]})) > 0`);
    case 'not icontains':
      return not(positive(`strpos(lower(${target}), lower(${p[0]})) > 0`));
  }
}
