export { type TestInfra, testInfra } from './infra.js';
export { type TestDatabase, createTestDatabase, inTransaction } from './database.js';
export { type ServiceShapeSubject, describeServiceShape } from './service-shape.js';
export { type OwnServer, freePort, startOwnNats, startOwnPostgres, startOwnRedis } from './own-servers.js';
export { type BalancedPort, READINESS, startOwnBalancers } from './balancer.js';
export { deleteStream } from './streams.js';
export { probeReadyz } from './readyz.js';
