// Shared jest settings: TypeScript through SWC (type-checking is the build's job),
// tests beside the code (unit: *.test.ts, integration: *.int.test.ts).
// A few dependencies ship only ES modules (jose, otplib and its @noble/@scure helpers); jest's
// CommonJS runtime cannot load those, so SWC transforms them too.
const ESM_ONLY = ['jose', 'otplib', '@otplib', '@noble', '@scure'];

module.exports = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.(t|j)sx?$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }],
    '^.+\\.mjs$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_ONLY.join('|')})/)`],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testMatch: ['<rootDir>/src/**/*.test.ts'],
  testTimeout: 30000,
};
