// ZitiQL: the filter language of list operations (Edge API §4.2), compiled to parameterised
// PostgreSQL, plus the list parameters (§4.1): limit, offset and sort normalisation.
// Hand-written lexer (lexer.ts) and recursive-descent parser (parser.ts) produce the AST (ast.ts);
// compile.ts turns it into SQL against an EntityQuerySchema (schema.ts); list-query.ts is the entry.
export type {
  ZitiQlBoolExpr,
  ZitiQlLhs,
  ZitiQlOperator,
  ZitiQlQuery,
  ZitiQlSetExpr,
  ZitiQlSortField,
  ZitiQlValue,
} from './ast.js';
export {
  type EntityQuerySchema,
  type MapSymbol,
  type QuerySymbol,
  type ScalarSymbol,
  type SchemaRegistry,
  type SetSymbol,
  type SymbolType,
  filterableFields,
} from './schema.js';
export { parseZitiQl } from './parser.js';
export {
  type CompiledListQuery,
  type ListParams,
  LIST_LIMIT_DEFAULT,
  LIST_LIMIT_MAX,
  LIST_OFFSET_MAX,
  UNLIMITED,
  compileFilter,
  compileListQuery,
} from './list-query.js';
export {
  type IdPage,
  type ListCondition,
  type Queryable,
  LIST_ALIAS,
  inIdOrder,
  listIds,
  shiftPlaceholders,
} from './run.js';
