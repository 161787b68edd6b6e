export { SERVICE_NAME, type GatewayDeps, type RunningGateway, type UpstreamOwner, startGateway } from './service.js';
export { type GatewayConfig, loadConfig } from './config.js';
export { type ControllerPki, type PkiOptions, PKI_FILES, loadOrCreatePki } from './pki/store.js';
export { HEALTH_PATHS } from './http/app.js';
