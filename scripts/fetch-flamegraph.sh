#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fetch-flamegraph.sh: print the path of the HTML template perf's flame
# graph report fills in (perf script report flamegraph --template PATH).
#
# perf looks for it in Debian's libjs-d3-flame-graph, which neither
# Debian 12 nor Debian 13 ships; the npm package d3-flame-graph carries
# it, self-contained, up to version 4.1.3 (5.0 dropped it), and newer
# perf (7.3's, for one) offers to download that very file, pinned by its
# MD5 (143e0d06ba69b8370b9848dcd6ae3f36).  The package is fetched once
# from the npm registry (npm's configured one, or $NPM_REGISTRY), its
# SHA-512 checked against the one pinned here, and the template kept
# under ${XDG_CACHE_HOME:-$HOME/.cache}/sframe-unwind/flamegraph/.
set -euo pipefail

name=d3-flame-graph
version=4.1.3
# The registry's "integrity" (sha512-NijuhJZh...), as sha512sum prints it.
sha512=3628ee849661693330a1b560c0643aef1f4fa2fa8c3075c16ecd0530710626fb\
16646b8be0ceceb01d37bfc9877725721e19d0606b189dbe70d36d5ef7e47e45
member=package/dist/templates/d3-flamegraph-base.html

dest=${XDG_CACHE_HOME:-$HOME/.cache}/sframe-unwind/flamegraph/$name-$version
template=$dest/d3-flamegraph-base.html
if [ -s "$template" ]; then
	echo "$template"
	exit 0
fi

die() {
	echo "fetch-flamegraph: error: $*" >&2
	exit 1
}

registry=${NPM_REGISTRY:-$(npm config get registry 2> /dev/null || true)}
registry=${registry:-https://registry.npmjs.org/}
url=${registry%/}/$name/-/$name-$version.tgz
mkdir -p "$dest"
tgz=$dest/$name-$version.tgz.part
curl -sSfL --retry 3 -o "$tgz" "$url" || die "cannot fetch $url"
got=$(sha512sum "$tgz" | cut -d' ' -f1)
if [ "$got" != "$sha512" ]; then
	rm -f "$tgz"
	die "$url: SHA-512 $got, not the pinned $sha512"
fi
tar -xzOf "$tgz" "$member" > "$template.part" ||
	die "$url has no $member"
rm -f "$tgz"
mv "$template.part" "$template"
echo "$template"
