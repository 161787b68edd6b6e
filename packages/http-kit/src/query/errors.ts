import { ApiError } from '@ziti/errors';

/** Position of a token: `line` is 1-based, `column` 0-based (ANTLR's convention, as the controller reports it). */
export interface SourcePos {
  line: number;
  column: number;
}

/** 400 INVALID_FILTER with `cause: {code: 'UNHANDLED', message}`, the shape the controller renders. */
export function invalidFilter(message: string): ApiError {
  return ApiError.of('INVALID_FILTER', { cause: { code: 'UNHANDLED', message } });
}

/**
 * The controller's syntax error message:
 * `Unexpected symbol: "x" at line: 1 column: N. line: 1, column: N, symbol: x`.
 */
export function unexpectedSymbol(symbol: string, pos: SourcePos): ApiError {
  const { line, column } = pos;
  return invalidFilter(
    `Unexpected symbol: "${symbol}" at line: ${line} column: ${column}. line: ${line}, column: ${column}, symbol: ${symbol}`,
  );
}

export function invalidPagination(message: string): ApiError {
  return ApiError.of('INVALID_PAGINATION', { cause: { code: 'UNHANDLED', message } });
}

export function invalidSort(message: string): ApiError {
  return ApiError.of('INVALID_SORT_IDENTIFIER', { cause: { code: 'UNHANDLED', message } });
}

/** A programming error of the caller (bad alias, bad schema): 500 UNHANDLED. */
export function misuse(message: string): ApiError {
  return ApiError.of('UNHANDLED', { cause: { code: 'UNHANDLED', message } });
}
