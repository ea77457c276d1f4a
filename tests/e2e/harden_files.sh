#!/usr/bin/env bash
# harden_files.sh: no file of the grading host and no variable of ka's
# environment reaches a result, whatever the candidate does (issue 12, items
# 1 and 2; docs/grader.md "Files of the grading host"). A secret file is
# planted outside the repository and the work folder (in a temporary folder
# and in $HOME), and a secret environment variable is set for ka. Candidates
# in tests/data/harden/ (OpenCL on PoCL, CUDA at the record stage) try to
# carry the secret out through #include, .incbin / .include in top-level asm
# (plain, concatenated strings, \x2e escapes, macro-built, an assembler
# macro, an asm operand), #line (the compile log quoting the file), #embed,
# _Pragma("GCC dependency"), host code reading the file at record time, and
# inline asm in the OpenCL kernel (plain and built by token pasting). Each
# must get its verdict, and no grade JSON, stdout/stderr, journal (sqlite3
# dump) or scorecard may contain the secret. Also: a C++ template bomb and
# a macro bomb end as compile_error quickly under the compile memory cap,
# and killing ka (SIGKILL) during a long compile leaves no compiler behind.
set -u
KA=${KA:-$PWD/build/ka}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass() { echo "PASS harden_files/$1"; }
fail() { echo "FAIL harden_files/$1: $2"; }
verdict_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"])' "$1" 2>/dev/null; }

SECRET="ka-harden-secret-$RANDOM$RANDOM-e9"
mkdir -p "$tmp/secret" "$tmp/home" "$tmp/cands"
printf '%s\n' "$SECRET" >"$tmp/secret/key.txt"
printf '%s\n' "$SECRET" >"$tmp/home/.ka-harden-secret"
export KA_HARDEN_SECRET="$SECRET"
export HOME="$tmp/home" KA_CACHE="$tmp/cache"
export KA_COMPILE_MEM_MB=1024 # the bombs end at 1 GiB, not 8

# The candidates, with SECRET_PATH filled in (the temporary folder's file
# for even-numbered fixtures, the one in $HOME for odd ones).
i=0
for f in tests/data/harden/*.c tests/data/harden/*.cu; do
	case $f in */bomb_*) continue ;; esac
	p="$tmp/secret/key.txt"
	[ $((i % 2)) -eq 1 ] && p="$HOME/.ka-harden-secret"
	sed "s|SECRET_PATH|$p|g" "$f" >"$tmp/cands/$(basename "$f")"
	i=$((i + 1))
done

leaks() { # files...: 0 if any holds the secret (or its hex)
	local hex
	hex=$(printf '%s' "$SECRET" | od -An -tx1 | tr -d ' \n')
	grep -qlF -e "$SECRET" -e "$hex" "$@" 2>/dev/null
}

L1=bank/public/L1/gelu_bias_scale
for c in "$tmp"/cands/*; do
	name=$(basename "$c")
	want=$(sed -n '1s|^// expect: ||p' "$c")
	case $name in
	*.cu) args=(--target cuda --record-only tests/data/cuda/h200_device.json) ;;
	*) args=(--target opencl --no-timing) ;;
	esac
	out="$tmp/$name.json"
	"$KA" grade --task "$L1" --kernel "$c" "${args[@]}" --workdir "$tmp/work" --json "$out" \
		>"$tmp/$name.log" 2>&1
	rc=$?
	got=$(verdict_of "$out")
	if [ $rc -ne 0 ] || ! echo "|$want|" | grep -qF "|$got|"; then
		fail "$name" "want $want, got '${got:-none}' (exit $rc): $(tail -c 400 "$tmp/$name.log" | tr '\n' ' ')"
	elif leaks "$out" "$tmp/$name.log"; then
		fail "$name" "the secret is in the result or ka's output"
	else
		pass "$name ($got)"
	fi
done

# The capability track: a cmd: model answering sample N with the Nth
# OpenCL candidate; then the whole output folder and the journal's dump.
ls "$tmp"/cands/*.c >"$tmp/list"
n=$(wc -l <"$tmp/list")
cat >"$tmp/model.sh" <<EOS
#!/bin/sh
cat >/dev/null
f=\$(sed -n "\${KA_MODEL_SAMPLE}p" "$tmp/list")
printf 'kernel:\n\`\`\`c\n'
cat "\$f"
printf '\`\`\`\n'
EOS
"$KA" --track capability --api-model "cmd:sh $tmp/model.sh" --k "$n" --tier L1 --target opencl \
	--no-timing --max-seconds 1 --min-samples 5 --max-samples 40 --out "$tmp/track" \
	>"$tmp/track.log" 2>&1
rc=$?
for db in $(find "$tmp/track" -name '*.db' -o -name '*.sqlite' -o -name 'journal*' 2>/dev/null); do
	sqlite3 "$db" .dump >"$tmp/dump-$(basename "$db").sql" 2>/dev/null
done
if [ ! -f "$tmp/track/scorecard.json" ]; then
	fail track "no scorecard (exit $rc): $(tail -c 400 "$tmp/track.log" | tr '\n' ' ')"
elif leaks -r "$tmp/track" "$tmp/track.log" $(ls "$tmp"/dump-*.sql 2>/dev/null); then
	fail track "the secret is in the track's output, journal or log"
elif [ -z "$(ls "$tmp"/dump-*.sql 2>/dev/null)" ]; then
	fail track "no journal found to dump in $tmp/track"
else
	pass "track ($n candidates, scorecard and journal clean)"
fi

# Bombs: compile_error (a memory or time cap) within a minute, the
# machine's memory untouched beyond the cap.
for b in bomb_template.cu bomb_macro.c; do
	case $b in
	*.cu) args=(--target cuda --record-only tests/data/cuda/h200_device.json) ;;
	*) args=(--target opencl --no-timing) ;;
	esac
	t0=$(date +%s)
	"$KA" grade --task "$L1" --kernel "tests/data/harden/$b" "${args[@]}" --workdir "$tmp/work" \
		--json "$tmp/$b.json" >"$tmp/$b.log" 2>&1
	rc=$?
	dt=$(($(date +%s) - t0))
	got=$(verdict_of "$tmp/$b.json")
	if [ $rc -eq 0 ] && [ "$got" = compile_error ] && [ $dt -le 130 ]; then
		pass "$b (compile_error in ${dt}s)"
	else
		fail "$b" "want compile_error quickly, got '${got:-none}' (exit $rc) in ${dt}s: $(tail -c 300 "$tmp/$b.log" | tr '\n' ' ')"
	fi
done

# SIGKILL of ka during a long compile: no compiler left behind. The
# compiler runs with its work folder under $tmp/kill as its cwd.
"$KA" grade --task "$L1" --kernel tests/data/harden/bomb_macro.c --target opencl --no-timing \
	--workdir "$tmp/kill" --json "$tmp/kill.json" >"$tmp/kill.log" 2>&1 &
ka_pid=$!
left() { # processes whose working folder is under $tmp/kill
	for p in /proc/[0-9]*; do
		case $(readlink "$p/cwd" 2>/dev/null) in "$tmp/kill"*) echo "${p#/proc/}" ;; esac
	done
}
# up to 60 s: on a loaded machine ka builds the gold before it compiles
for _ in $(seq 600); do [ -n "$(left)" ] && break; sleep 0.1; done
started=$(left)
kill -9 $ka_pid
wait $ka_pid 2>/dev/null
# The compiler gets its parent-death signal at once, but on a loaded machine
# its exit (a jail's namespaces torn down) can take seconds: up to 20 s.
for _ in $(seq 200); do
	rest=$(left)
	[ -z "$rest" ] && break
	sleep 0.1
done
if [ -z "$started" ]; then
	fail kill_no_orphan "the compiler never started"
elif [ -n "$rest" ]; then
	fail kill_no_orphan "left running after SIGKILL of ka: $(for p in $rest; do tr '\0' ' ' <"/proc/$p/cmdline"; echo; done | head -3)"
	kill -9 $rest 2>/dev/null
else
	pass kill_no_orphan
fi

# A macro bomb in the OpenCL kernel source: PoCL compiles it inside the
# runner, which must stay under the compile memory cap (1 GiB here) as a
# jailed compiler does. The runner's own address-space cap is set to 4 GiB
# as a safety net for this machine; the runner's peak resident memory is
# polled while it builds (about 1.3 GiB with the cap; without it the build
# grows to the 4 GiB net).
KA_RUNNER_MEM_MB=4096 "$KA" grade --task "$L1" --kernel tests/data/harden/bomb_kernel_macro.c \
	--target opencl --no-timing --workdir "$tmp/kbomb" --json "$tmp/kbomb.json" >"$tmp/kbomb.log" 2>&1 &
ka_pid=$!
peak=0
while kill -0 $ka_pid 2>/dev/null; do
	for p in $(pgrep -P $ka_pid 2>/dev/null); do
		hwm=$(awk '/VmHWM/ {print $2}' "/proc/$p/status" 2>/dev/null)
		[ -n "$hwm" ] && [ "$hwm" -gt "$peak" ] && peak=$hwm
	done
	sleep 0.1
done
wait $ka_pid
rc=$?
got=$(verdict_of "$tmp/kbomb.json")
if [ $rc -eq 0 ] && [ "$got" = compile_error ] && [ "$peak" -lt $((2 << 20)) ]; then
	pass "bomb_kernel_macro.c (compile_error, runner peak $((peak >> 10)) MiB)"
else
	fail bomb_kernel_macro.c "want compile_error under 2 GiB, got '${got:-none}' (exit $rc), runner peak $((peak >> 10)) MiB: $(tail -c 300 "$tmp/kbomb.log" | tr '\n' ' ')"
fi
