// Generated gRPC contracts between contexts (ts-proto over proto/). Never edit src/gen by hand.
export { Principal } from './gen/ziti/v1/principal.js';
export {
  IdentityAuthServiceService,
  IdentityAuthServiceClient,
  type IdentityAuthServiceServer,
  ResolveApiSessionRequest,
  ResolveApiSessionResponse,
} from './gen/ziti/v1/identity_auth.js';
export {
  HealthServiceService,
  HealthServiceClient,
  type HealthServiceServer,
  HealthCheckRequest,
  HealthCheckResponse,
} from './gen/ziti/v1/health.js';
