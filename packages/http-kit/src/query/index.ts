// ZitiQL: the filter language of list operations, compiled to parameterised SQL.
// (Implemented in this folder: lexer, parser, AST, SQL compiler, list parameter normalisation.)
export {};
