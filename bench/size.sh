#!/bin/sh
# bench/size.sh [BINARY]: the bytes of a harness binary by Go module.
# Without BINARY it builds ./cmd/harness as the README does (no ldflags)
# into a temporary file. Every symbol of `go tool nm -size` is charged to
# the module whose path is the longest prefix of the symbol's package
# (type descriptors, itabs and static temps included); symbols of no
# module are the standard library ("std") or the runtime's and linker's
# own ("go:" tables, "other"). Zero-initialised data (.bss, .noptrbss)
# takes no bytes in the file and is left out. The file is larger than
# the sum: DWARF, pclntab and the symbol table are not symbols of any
# module, nor are files embedded with //go:embed; the first three are
# printed first (readelf, from binutils).
set -eu
cd "$(dirname "$0")/.."
bin=${1:-}
if [ -z "$bin" ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	bin=$tmp/harness
	go build -o "$bin" ./cmd/harness
fi
printf 'binary %s: %d bytes\n' "$bin" "$(wc -c <"$bin")"
readelf -SW "$bin" | sed 's/^ *\[ *[0-9]*\]//' | awk '
function hex(h,   i, v) {
	v = 0; h = tolower(h)
	for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
	return v
}
$2 == "NOBITS" { printf "NOBITS %d %d\n", hex($3), hex($5) }
$1 ~ /^\.(z?debug)/ { dwarf += hex($5) }
$1 == ".gopclntab" { pcln = hex($5) }
$1 == ".symtab" || $1 == ".strtab" { symtab += hex($5) }
END { printf "SECT %d %d %d\n", dwarf, pcln, symtab }' >"${TMPDIR:-/tmp}/size.$$"
{
	cat "${TMPDIR:-/tmp}/size.$$"
	rm -f "${TMPDIR:-/tmp}/size.$$"
	go version -m "$bin" | awk '$1 == "mod" || $1 == "dep" { print "MOD", $2 }'
	go tool nm -size "$bin"
} | awk '
function hex(h,   i, v) {
	v = 0; h = tolower(h)
	for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
	return v
}
function esc(p,   i) {
	# The linker writes dots of a path'"'"'s last element as %2e.
	i = match(p, /[^\/]*$/)
	s = substr(p, RSTART); gsub(/\./, "%2e", s)
	return substr(p, 1, RSTART - 1) s
}
$1 == "NOBITS" { lo[++nb] = $2; hi[nb] = $2 + $3; next }
$1 == "SECT" {
	printf "%12d  DWARF\n%12d  .gopclntab\n%12d  .symtab+.strtab\n", $2, $3, $4
	next
}
$1 == "MOD" { mods[++n] = $2; alt[n] = esc($2); next }
NF >= 4 {
	addr = hex($1); size = $2; name = $4
	for (i = 1; i <= nb; i++) if (addr >= lo[i] && addr < hi[i]) next
	for (i = 5; i <= NF; i++) name = name " " $i
	sub(/^type:\*?/, "", name); sub(/^go:itab\.\*?/, "", name)
	best = ""
	for (i = 1; i <= n; i++) {
		m = mods[i]; a = alt[i]
		if (length(m) <= length(best)) continue
		if (index(name, m "/") == 1 || index(name, m ".") == 1 || index(name, a ".") == 1) best = m
	}
	if (best == "") {
		if (name ~ /^go:/) best = "go: (runtime tables)"
		else if (name ~ /^[a-z0-9_]+([\/.]|$)/ && name !~ /^[^\/.]+\.[^\/]*\//) best = "std"
		else best = "other"
	}
	sum[best] += size; total += size
}
END {
	for (m in sum) printf "%12d %6.2f%% %s\n", sum[m], 100 * sum[m] / total, m | "sort -rn"
	close("sort -rn")
	printf "%12d  total of symbols\n", total
}'
