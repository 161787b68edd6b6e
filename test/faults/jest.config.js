// The fault-injection suite: one file, its own PostgreSQL, NATS and Redis and the controller as
// separate processes; run alone (`npm run test:faults` at the root), never beside other suites.
module.exports = { ...require('../../jest.base.js'), rootDir: __dirname, testMatch: ['<rootDir>/**/*.test.ts'], testTimeout: 180000, maxWorkers: 1, verbose: true };
