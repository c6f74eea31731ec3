#!/usr/bin/env bash
# 'mgpu-tune sass CUBIN' end to end (issue 19) on a cubin we compile: the same evidence line as
# 'compile matmul --sass' gives for that kernel (one shared formatter), registers from the cubin
# alone and from the ptxas log, the JSON fields a peer comparison reads, and exit 2 for a
# kernel the cubin lacks and for an ELF file that is not a cubin. Needs nvdisasm, as the
# compile_matmul_sass test does (scripts/setup.sh installs it).
set -uo pipefail
MGPU="${MGPU:?}"
T="$(mktemp -d /tmp/mgpu-sass.XXXXXX)"; trap 'rm -rf "$T"' EXIT
fails=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); sed 's/^/  | /' "$T/out" | tail -8; fi; }
py() { /usr/bin/python3 -c "$@"; }

MGPU_DUMP_TO="$T/dump" "$MGPU" compile matmul --arch sm_90a --config {} --no-cache --sass --emit-dir "$T/emit" > "$T/compile" 2>&1
rc=$?; cp "$T/compile" "$T/out"
cubin="$(ls "$T"/emit/*.cubin 2>/dev/null | head -1)"; log="$(ls "$T"/dump/*.ptxas.log 2>/dev/null | head -1)"
ptx="$(ls "$T"/dump/*.ptx 2>/dev/null | head -1)"
check "the default config compiles with its cubin, PTX and ptxas log kept" '[ $rc = 0 ] && [ -n "$cubin" ] && [ -n "$log" ] && [ -n "$ptx" ]'

"$MGPU" sass "$cubin" --ptxas-log "$log" --ptx "$ptx" > "$T/out" 2>&1; rc=$?
check "the same evidence line as compile --sass" '[ $rc = 0 ] && [ "$(grep "^      sass:" "$T/out")" = "$(grep "^      sass:" "$T/compile")" ]'
check "registers and spills from the log" 'grep -q "^.*: kernel matmul (1 of 1 in the cubin): [0-9]\+ registers, 0 bytes spill stores" "$T/out"'

"$MGPU" compile matmul --arch sm_90a --config {} --json > "$T/compile.json" 2>/dev/null
"$MGPU" sass "$cubin" --json > "$T/out" 2>&1; rc=$?
same="$(py "import json,sys; c=json.load(open(sys.argv[1]))['configs'][0]; s=json.load(open(sys.argv[2]))
print(s['registers'] == c['registers'] and s['registers_from'] == 'cubin' and s['spill_store_bytes'] is None
      and s['sass']['main_loop']['mma'] == 8 and s['sass']['setmaxnreg_kept'])" "$T/compile.json" "$T/out" 2>&1)"
check "without the log: registers read from the cubin equal ptxas's" '[ $rc = 0 ] && [ "$same" = True ]'

"$MGPU" sass "$cubin" --kernel nosuch > "$T/out" 2>&1; rc=$?
check "a kernel the cubin lacks is bad input" '[ $rc = 2 ] && grep -q "no kernel .nosuch. in .*; it holds: matmul" "$T/out"'
"$MGPU" sass "$(type -P true)" > "$T/out" 2>&1; rc=$?
check "an ELF file for another machine is bad input" '[ $rc = 2 ] && grep -q "is not a cubin: an ELF file for machine" "$T/out"'
"$MGPU" sass "$cubin" --ptxas-log "$ptx" > "$T/out" 2>&1; rc=$?
check "a log that reports no such function is bad input" '[ $rc = 2 ] && grep -q "reports no function .matmul." "$T/out"'
exit $((fails > 0))
