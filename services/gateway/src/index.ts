export { SERVICE_NAME, type GatewayDeps, type RunningGateway, type UpstreamOwner, startGateway } from './service.js';
export { type GatewayConfig, type GatewayGuardConfig, loadConfig, loadGuardConfig } from './config.js';
export type { ForwardedHeader } from './http/client-address.js';
export type { AuthRateLimiterOptions } from './limits/adaptive-limiter.js';
export type { LoginLimitOptions } from './limits/login-failures.js';
export { type ControllerPki, type PkiOptions, PKI_FILES, loadOrCreatePki } from './pki/store.js';
export { HEALTH_PATHS } from './http/app.js';
export { type Snapshotter, type SnapshotterDeps, createSnapshotter, defaultSnapshotDir } from './maintenance/index.js';
