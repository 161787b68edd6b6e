// Shared jest settings: TypeScript through SWC (type-checking is the build's job),
// tests beside the code (unit: *.test.ts, integration: *.int.test.ts).
module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.(t|j)sx?$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } } }] },
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testMatch: ['<rootDir>/src/**/*.test.ts'],
  testTimeout: 30000,
};
