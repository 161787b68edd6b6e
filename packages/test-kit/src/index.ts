export { type TestInfra, testInfra } from './infra.js';
export { type TestDatabase, createTestDatabase } from './database.js';
