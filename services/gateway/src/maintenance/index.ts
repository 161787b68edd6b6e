// Operations the gateway answers by asking every context (MaintenanceService): `GET /summary`
// and `POST /database/snapshot`, and the snapshotter the data integrity fix uses.
export { CONTEXT_ORDER, type MaintenanceClient, maintenanceClients } from './contexts.js';
export { countEntities, summaryHandler } from './summary.js';
export { SNAPSHOT_LIMIT_KEY, type Snapshotter, type SnapshotterDeps, createSnapshotter, defaultSnapshotDir, snapshotHandler } from './snapshotter.js';
