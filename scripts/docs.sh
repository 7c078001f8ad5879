#!/usr/bin/env bash
# Builds the user guide (docs/, mkdocs.yml) into build/site as a static site. --strict turns
# every mkdocs warning (a broken link between pages, a page missing from the navigation) into
# a failure. The reference pages are checked against the code first (scripts/gen_reference.py
# rewrites them). Needs Debian's `mkdocs` (scripts/install-deps.sh installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v mkdocs >/dev/null; then
  echo "docs.sh: mkdocs is not installed (apt-get install mkdocs, or scripts/install-deps.sh)" >&2
  exit 1
fi
python3 scripts/gen_reference.py --check
mkdocs build --strict --clean --site-dir build/site "$@"
echo "docs.sh: the site is in build/site (open build/site/index.html)"
