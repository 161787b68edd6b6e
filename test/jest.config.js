// One controller per test file. maxWorkers 1: every controller of a run shares the NATS stream
// `ZITI_EVENTS` (subjects `ziti.events.>`, durable consumer names) and the Redis key space, since
// `startController` has no option to isolate them (see README, "Isolation").
module.exports = { ...require('../jest.base.js'), testMatch: ['<rootDir>/**/*.test.ts'], testTimeout: 60000, maxWorkers: 1 };
