/**
 * The ZitiQL syntax tree produced by `parseZitiQl`. It carries no schema knowledge: symbols are checked
 * (known, public, set or not, type) when it is compiled against an `EntityQuerySchema`.
 */

/** A literal on the right-hand side of an operation. */
export type ZitiQlValue =
  | { type: 'string'; value: string }
  /** `isInt`: the literal parses as an int64 (otherwise float64); `text` is the literal as written. */
  | { type: 'number'; value: number; isInt: boolean; text: string }
  | { type: 'bool'; value: boolean }
  | { type: 'datetime'; value: Date }
  | { type: 'null' };

/** The left-hand side of an operation. */
export type ZitiQlLhs =
  | { kind: 'symbol'; name: string }
  | { kind: 'anyOf'; name: string }
  | { kind: 'allOf'; name: string }
  | { kind: 'count'; set: ZitiQlSetExpr };

/** `IDENTIFIER` (a set symbol) or `from <setSymbol> where <query>`. */
export type ZitiQlSetExpr =
  | { kind: 'symbol'; name: string }
  | { kind: 'subquery'; name: string; query: ZitiQlQuery };

export type ZitiQlOperator =
  | '='
  | '!='
  | '<'
  | '<='
  | '>'
  | '>='
  | 'in'
  | 'not in'
  | 'between'
  | 'not between'
  | 'contains'
  | 'not contains'
  | 'icontains'
  | 'not icontains';

export type ZitiQlBoolExpr =
  | { kind: 'and'; operands: ZitiQlBoolExpr[] }
  | { kind: 'or'; operands: ZitiQlBoolExpr[] }
  | { kind: 'not'; operand: ZitiQlBoolExpr }
  | { kind: 'const'; value: boolean }
  /** A bare identifier used as a boolean, e.g. `isAdmin`. */
  | { kind: 'boolSymbol'; name: string }
  | { kind: 'isEmpty'; set: ZitiQlSetExpr }
  /**
   * `lhs op values`: one value for comparisons and contains, two (lower, upper) for between,
   * one or more (all of one type) for in.
   */
  | { kind: 'compare'; lhs: ZitiQlLhs; op: ZitiQlOperator; values: ZitiQlValue[] };

export interface ZitiQlSortField {
  field: string;
  direction: 'asc' | 'desc';
}

/** A whole statement: `[boolExpr] [sort by …] [skip N] [limit N|none]`; absent parts are undefined. */
export interface ZitiQlQuery {
  filter?: ZitiQlBoolExpr;
  sort?: ZitiQlSortField[];
  /** As written (normalised later: negative → 0, above the max → the max). */
  skip?: number;
  /** As written; `'none'` for `limit none`. */
  limit?: number | 'none';
}
