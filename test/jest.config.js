// One controller per test file, one file at a time (each whole controller takes a core's worth of
// CPU while it starts). Controllers are isolated on NATS and Redis by their own stream, subject
// prefix and key prefix (see README, "Isolation").
// The fault-injection suite (faults/faults.test.ts) runs on its own: `npm run test:faults`.
module.exports = {
  ...require('../jest.base.js'),
  setupFiles: [require.resolve('../jest.internal-tls.js')],
  testMatch: ['<rootDir>/**/*.test.ts'],
  // The suites of separate processes (faults/*.test.ts) run on their own: `npm run test:faults`.
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/faults/[^/]+\\.test\\.ts$'],
  testTimeout: 60000,
  maxWorkers: 1,
};
