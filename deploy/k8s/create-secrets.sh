#!/bin/sh
# Creates the Secrets that the manifests in this directory read, one per purpose. The kustomization
# holds none, so no placeholder can reach a pod. Run it once per cluster, after the namespace
# exists (kubectl apply -f deploy/k8s/namespace.yaml) and before or after kubectl apply -k
# deploy/k8s (until the Secrets exist the pods wait in CreateContainerConfigError):
#
#   NATS_URL=nats://nats.example.internal:4222 \
#   REDIS_URL=redis://redis.example.internal:6379 \
#   IDENTITY_AUTH_DATABASE_URL=postgresql://identity_auth:...@postgres.example.internal:5432/ziti \
#   PKI_ENROLLMENT_DATABASE_URL=... POLICY_DATABASE_URL=... SESSION_DATABASE_URL=... \
#   POSTURE_DATABASE_URL=... FABRIC_DATABASE_URL=... \
#   sh deploy/k8s/create-secrets.sh [namespace]      # namespace: ziti unless given
#
# DATABASE_URL, when set, stands for each <CONTEXT>_DATABASE_URL left unset (one database role for
# the six schemas; a role per context that may use only its own schema is the tighter choice).
# ZITI_PWD, the password of the admin identity-auth creates at its first start, is generated unless
# set; read it with
#   kubectl -n ziti get secret ziti-admin -o jsonpath='{.data.ZITI_PWD}' | base64 -d
#
# The keys are random (openssl rand -base64 48), never printed, and reach kubectl on its standard
# input, not on its command line. A Secret that exists already is kept as it is: ZITI_PKI_KEY and
# ZITI_MFA_SECRET decrypt what is stored and ZITI_SERVER_KEY_SECRET is the seed of the public
# server's key, so none of them may change under an installation. To replace a Secret (a new
# database URL, say), delete it, run this again and restart the pods that read it.
set -eu

namespace="${1:-ziti}"

fail() {
  echo "create-secrets.sh: $*" >&2
  exit 1
}

# The value of the variable named $1, else of the one named $2 (when given); never a placeholder.
setting() {
  eval "value=\${$1:-}"
  if [ -z "$value" ] && [ -n "${2:-}" ]; then eval "value=\${$2:-}"; fi
  [ -n "$value" ] || fail "set $1${2:+ (or $2)}"
  case "$value" in
    *change-me* | *changeme* | *CHANGE-ME* | *CHANGEME*) fail "$1${2:+ (or $2)} holds a placeholder" ;;
  esac
  printf '%s' "$value"
}

# $1 random bytes, base64-encoded.
random() {
  value=$(openssl rand -base64 "$1" | tr -d '\n')
  [ "${#value}" -ge 32 ] || fail "openssl rand gave no key"
  printf '%s' "$value"
}

# create NAME KEY=VALUE...: the Secret NAME with these keys, unless it exists.
create() {
  name=$1
  shift
  existing=$(kubectl -n "$namespace" get secret "$name" --ignore-not-found -o name)
  if [ -n "$existing" ]; then
    echo "secret/$name exists: kept"
    return 0
  fi
  printf '%s\n' "$@" | kubectl -n "$namespace" create secret generic "$name" --from-env-file=/dev/stdin
}

# Everything is read and generated first, so a missing setting creates nothing.
nats_url=$(setting NATS_URL)
redis_url=$(setting REDIS_URL)
identity_auth_db=$(setting IDENTITY_AUTH_DATABASE_URL DATABASE_URL)
pki_enrollment_db=$(setting PKI_ENROLLMENT_DATABASE_URL DATABASE_URL)
policy_db=$(setting POLICY_DATABASE_URL DATABASE_URL)
session_db=$(setting SESSION_DATABASE_URL DATABASE_URL)
posture_db=$(setting POSTURE_DATABASE_URL DATABASE_URL)
fabric_db=$(setting FABRIC_DATABASE_URL DATABASE_URL)
if [ -n "${ZITI_PWD:-}" ]; then admin_password=$(setting ZITI_PWD); else admin_password=$(random 24); fi
internal_secret=$(random 48)
server_key_secret=$(random 48)
pki_key=$(random 48)
mfa_secret=$(random 48)

# Signs the principal the gateway forwards to the contexts: gateway and every context.
create ziti-internal-secret "ZITI_INTERNAL_SECRET=$internal_secret"
# Seed of the public edge server's TLS and JWT signing key: gateway and pki-enrollment.
create ziti-server-key "ZITI_SERVER_KEY_SECRET=$server_key_secret"
# Encrypts the controller PKI's private keys at rest: pki-enrollment.
create ziti-pki-key "ZITI_PKI_KEY=$pki_key"
# Encrypts TOTP secrets at rest: identity-auth.
create ziti-mfa-secret "ZITI_MFA_SECRET=$mfa_secret"
# The default admin's password: identity-auth.
create ziti-admin "ZITI_PWD=$admin_password"
# NATS and Redis (their URLs may carry credentials): gateway and every context.
create ziti-messaging "NATS_URL=$nats_url" "REDIS_URL=$redis_url"
# Each context's database (its Deployment and its migration Job).
create identity-auth-database "DATABASE_URL=$identity_auth_db"
create pki-enrollment-database "DATABASE_URL=$pki_enrollment_db"
create policy-database "DATABASE_URL=$policy_db"
create session-database "DATABASE_URL=$session_db"
create posture-database "DATABASE_URL=$posture_db"
create fabric-database "DATABASE_URL=$fabric_db"
