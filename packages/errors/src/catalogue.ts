/**
 * The OpenZiti error catalogue: every code the Edge APIs answer with, its message and HTTP status,
 * as the controller defines them (foundation errorz and controller apierror).
 */
export interface ErrorDef {
  readonly code: string;
  readonly message: string;
  readonly status: number;
}

const def = (code: string, message: string, status: number): ErrorDef => ({ code, message, status });

export const Errors = {
  NOT_FOUND: def('NOT_FOUND', 'The resource requested was not found or is no longer available', 404),
  UNHANDLED: def('UNHANDLED', 'An unhandled error occurred', 500),
  INVALID_FIELD: def('INVALID_FIELD', 'The field contains an invalid value', 400),
  ENTITY_CAN_NOT_BE_DELETED: def('ENTITY_CAN_NOT_BE_DELETED', 'The entity requested for delete can not be deleted', 400),
  ENTITY_CAN_NOT_BE_UPDATED: def('ENTITY_CAN_NOT_BE_UPDATED', 'The entity requested for update can not be updated', 400),
  COULD_NOT_VALIDATE: def('COULD_NOT_VALIDATE', 'The supplied request contains an invalid document', 400),
  UNAUTHORIZED: def(
    'UNAUTHORIZED',
    'The request could not be completed. The session is not authorized or the credentials are invalid',
    401,
  ),
  INVALID_FILTER: def('INVALID_FILTER', 'The filter query supplied is invalid', 400),
  INVALID_PAGINATION: def('INVALID_PAGINATION', 'The pagination properties provided are invalid', 400),
  INVALID_SORT_IDENTIFIER: def('INVALID_SORT_IDENTIFIER', 'The sort order supplied is invalid', 400),
  METHOD_NOT_ALLOWED: def('METHOD_NOT_ALLOWED', 'The resource requested does not support this HTTP verb', 405),
  COULD_NOT_PARSE_BODY: def('COULD_NOT_PARSE_BODY', 'The body of the request could not be parsed', 400),
  COULD_NOT_READ_BODY: def('COULD_NOT_READ_BODY', 'The body of the request could not be read', 500),
  REQUEST_ENTITY_TOO_LARGE: def('REQUEST_ENTITY_TOO_LARGE', 'The request body is too large', 413),
  INVALID_UUID: def('INVALID_UUID', 'The supplied UUID is invalid', 400),
  INVALID_CONTENT_TYPE: def('INVALID_CONTENT_TYPE', 'The content type supplied is not acceptable', 400),
  INVALID_AUTH: def('INVALID_AUTH', 'The authentication request failed', 401),
  INVALID_AUTH_METHOD: def('INVALID_AUTH_METHOD', 'The supplied authentication method is not valid', 400),
  ENROLLMENT_EXPIRED: def('ENROLLMENT_EXPIRED', 'The window for this enrollment has expired', 400),
  ENROLLMENT_IDENTITY_ALREADY_ENROLLED: def(
    'ENROLLMENT_IDENTITY_ALREADY_ENROLLED',
    'The identity is already enrolled',
    409,
  ),
  COULD_NOT_PROCESS_CSR: def('COULD_NOT_PROCESS_CSR', 'The supplied csr could not be processed', 400),
  ENROLLMENT_CA_NOT_VALID: def('ENROLLMENT_CA_NOT_VALID', 'The CA tied to the supplied token is no longer valid', 400),
  ENROLLMENT_NO_VALID_CAS: def('ENROLLMENT_NO_VALID_CAS', 'No CAs are valid for this request', 400),
  INVALID_ENROLLMENT_TOKEN: def('INVALID_ENROLLMENT_TOKEN', 'The supplied token is not valid', 400),
  INVALID_ENROLLMENT_NOT_ALLOWED: def('INVALID_ENROLLMENT_NOT_ALLOWED', 'The enrollment is not allowed', 409),
  INVALID_ENROLLMENT_ALREADY_ENROLLED: def(
    'INVALID_ENROLLMENT_ALREADY_ENROLLED',
    'The enrollment has already been completed',
    410,
  ),
  INVALID_ENROLL_METHOD: def('INVALID_ENROLL_METHOD', 'The supplied enrollment method is not valid', 400),
  MISSING_OR_INVALID_CSR: def(
    'MISSING_OR_INVALID_CSR',
    'The supplied enrollment request is missing or contains an invalid CSR',
    400,
  ),
  NO_EDGE_ROUTERS_AVAILABLE: def(
    'NO_EDGE_ROUTERS_AVAILABLE',
    'No edge routers are assigned and online to handle the requested connection',
    400,
  ),
  COULD_NOT_PARSE_x509_FROM_DER: def('COULD_NOT_PARSE_x509_FROM_DER', 'could not parse x509 from DER', 400),
  CERT_FAILED_VALIDATION: def('CERT_FAILED_VALIDATION', 'certificate failed to validate against CA', 400),
  CERT_IN_USE: def('CERT_IN_USE', 'The certificate supplied is already associated with another identity', 409),
  CA_ALREADY_VERIFIED: def('CA_ALREADY_VERIFIED', 'CA has already been verified', 409),
  EXPECTED_PEM_CERTIFICATE: def('EXPECTED_PEM_CERTIFICATE', "expected PEM block type 'CERTIFICATE'", 400),
  COULD_NOT_PARSE_DER_BLOCK: def('COULD_NOT_PARSE_DER_BLOCK', "The certificate's DER block could not be parsed", 400),
  COULD_NOT_PARSE_PEM_BLOCK: def('COULD_NOT_PARSE_PEM_BLOCK', "The certificate's PEM block could not be parsed", 400),
  INVALID_COMMON_NAME: def('INVALID_COMMON_NAME', 'The common name of the supplied certificate is invalid', 400),
  CERTIFICATE_FAILED_VALIDATION: def(
    'CERTIFICATE_FAILED_VALIDATION',
    "The supplied certificate failed to validate against the CA's certificate chain",
    400,
  ),
  CERTIFICATE_IS_NOT_CA: def('CERTIFICATE_IS_NOT_CA', 'Leading certificate is not a CA', 400),
  INVALID_AUTHENTICATOR_PROPERTIES: def(
    'INVALID_AUTHENTICATOR_PROPERTIES',
    'The properties supplied did not match the authenticator method',
    400,
  ),
  CAN_NOT_UPDATE_AUTHENTICATOR: def(
    'CAN_NOT_UPDATE_AUTHENTICATOR',
    'The authenticator cannot be updated in this fashion',
    409,
  ),
  CAN_NOT_UPDATE_ROUTER: def(
    'CAN_NOT_UPDATE_ROUTER',
    'The router was not added via the Edge API and cannot be updated',
    409,
  ),
  MAX_AUTHENTICATOR_METHODS_REACHED: def(
    'MAX_AUTHENTICATOR_METHODS_REACHED',
    'The identity already has the maximum authenticators of the specified method',
    409,
  ),
  RATE_LIMITED: def(
    'RATE_LIMITED',
    'The requested operation is rate limited and the rate limit has been exceeded. Please try again later',
    429,
  ),
  TIMEOUT: def('TIMEOUT', 'The requested operation took too much time to reply', 503),
  INVALID_POSTURE: def('INVALID_POSTURE', 'Posture response data is missing or wrong', 409),
  MFA_EXISTS: def('MFA_EXISTS', 'An MFA record already exists, try removing it', 409),
  MFA_ENROLLMENT_NOT_STARTED: def('MFA_ENROLLMENT_NOT_STARTED', 'MFA enrollment has not been started', 404),
  MFA_INVALID_TOKEN: def('MFA_INVALID_TOKEN', 'An invalid token/code was provided', 400),
  INVALID_BACKING_TOKEN_TYPE: def('INVALID_BACKING_TOKEN_TYPE', 'The backing token type is invalid', 400),
  MFA_NOT_ENROLLED: def('MFA_NOT_ENROLLED', 'The current identity is not enrolled in MFA', 409),
  COULD_NOT_PARSE_PROXY_CERT: def('COULD_NOT_PARSE_PROXY_CERT', 'could not decode proxy client cert', 500),
  MISSING_CERT_CLAIM: def(
    'MISSING_CERT_CLAIM',
    'The certificate is expected to contain and externalId, which was not found',
    400,
  ),
  FAILED_ER_REENROLLMENT: def('FAILED_ER_REENROLLMENT', 'the edge router failed to be re-enrolled, see cause', 500),
  INVALID_CLIENT_CERT: def('INVALID_CLIENT_CERT', 'The provided client certificate is invalid', 400),
  INVALID_CERT_PEM: def(
    'INVALID_CERT_PEM',
    'the supplied certificate PEM is either invalid or contains the incorrect number of certificates',
    400,
  ),
  CAN_NOT_DELETE_REFERENCED_ENTITY: def(
    'CAN_NOT_DELETE_REFERENCED_ENTITY',
    'the entity cannot be deleted because it is referenced by another entity, see cause',
    409,
  ),
  REFERENCED_ENTITY_NOT_FOUND: def('REFERENCED_ENTITY_NOT_FOUND', 'REFERENCED_ENTITY_NOT_FOUND', 400),
  ENROLLMENT_EXISTS: def('ENROLLMENT_EXISTS', 'ENROLLMENT_EXISTS', 409),
  SERVER_TOO_MANY_REQUESTS: def('SERVER_TOO_MANY_REQUESTS', 'Too many requests to alter state have been issued. Please slow your request rate or try again later.', 429),
  SERVER_NOT_RUNNING_IN_HA_MODE: def('SERVER_NOT_RUNNING_IN_HA_MODE', 'The server is not running in HA mode', 400),
  TRANSFER_LEADERSHIP_ERROR: def('TRANSFER_LEADERSHIP_ERROR', 'Leadership could not be transferred', 500),
  CLUSTER_NO_LEADER: def('CLUSTER_NO_LEADER', 'The cluster has no leader', 503),
  SERVICE_UNAVAILABLE: def('SERVICE_UNAVAILABLE', 'The service is unavailable, try again later', 503),
  UNSUPPORTED_MEDIA: def('UNSUPPORTED_MEDIA', 'The requested media type is not supported', 415),
  // Internal (the router control plane): a router's terminator id is taken by a terminator of another
  // service, router, binding or host (OpenZiti CreateTerminatorV2's non-retriable FailedIdConflict).
  // 412 travels over gRPC as FAILED_PRECONDITION.
  ID_CONFLICT: def('ID_CONFLICT', 'selected id conflicts with an existing terminator', 412),
} as const satisfies Record<string, ErrorDef>;

export type ErrorCode = keyof typeof Errors;

export function lookupError(code: string): ErrorDef | undefined {
  return (Errors as Record<string, ErrorDef>)[code];
}
