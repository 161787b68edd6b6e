export * from './route.js';
export { ALL_ROUTES, routesFor, routeByOperationId } from './routes/index.js';
export { MODELS } from './models/index.js';
export * as common from './models/common.js';
