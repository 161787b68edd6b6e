#!/bin/sh
# Generates a service's Prisma client without network access: the Prisma CLI insists on a
# native schema engine it would download, but `generate` never runs it, so a stub is enough.
set -e
stub="${TMPDIR:-/tmp}/prisma-schema-engine-stub"
if [ ! -x "$stub" ]; then printf '#!/bin/sh\nexit 1\n' > "$stub"; chmod +x "$stub"; fi
export PRISMA_SCHEMA_ENGINE_BINARY="$stub" CHECKPOINT_DISABLE=1 PRISMA_HIDE_UPDATE_MESSAGE=1
exec npx --no-install prisma generate
