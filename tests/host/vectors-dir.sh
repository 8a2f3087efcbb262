#!/bin/bash
# Prints the folder of the shared test vectors: $AESLOOP_VECTORS, else
# ../shared/vectors beside the checkout (where CI puts it).  Fails if absent.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
dir=${AESLOOP_VECTORS:-$top/../shared/vectors}
if [ ! -f "$dir/vectors.tsv" ]; then
	echo "vectors-dir.sh: no test vectors in $dir (set AESLOOP_VECTORS)" >&2
	exit 1
fi
cd "$dir" && pwd
