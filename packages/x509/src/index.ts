// X.509 and DER by hand on Node's crypto: certificates issued and parsed without a dependency.
// No domain logic: the controller's PKI (pki-enrollment) and the internal plane's CA (service-kit) use it.
export * from './der.js';
export * from './x509.js';
export * from './derive.js';
export * from './chain.js';
