// Test processes hold an internal identity for every context (one CA made in memory), as the
// all-in-one controller does, so contexts started by a test serve and call each other over mutual TLS.
require('@ziti/service-kit').holdProcessIdentities();
