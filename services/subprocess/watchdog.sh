# The watchdog of one subprocess runtime (see watchdog.go): run by /bin/sh
# with $1 = the runtime's cgroup directory, or empty with process groups.
# stdin is a pipe only the runtime writes; it ends when the runtime's
# process is gone, however it died. Builtins only: no PATH, no environment.
trap '' INT TERM HUP QUIT TSTP TTIN TTOU PIPE

# stat PID sets s to the fields of /proc/PID/stat after the command name:
# state ppid pgrp session ... (pgrp is $3, session $4, start time $20).
stat() { s=; read -r s 2>/dev/null <"/proc/$1/stat" || return 1; s=${s##*) }; }

# Announcements: "+g PGID START", "+s SID START" (a process group, a
# terminal session, by its leader's pid and start time) and "-g PGID",
# "-s SID" (observed empty). held is the set, as " g:PGID:START ...".
held=
while read -r op id start; do
	case $op in
	+g | +s) held="$held ${op#+}:$id:$start" ;;
	-g | -s)
		kept=
		for e in $held; do
			case $e in "${op#-}:$id:"*) ;; *) kept="$kept $e" ;; esac
		done
		held=$kept
		;;
	esac
done

# The runtime is gone: kill what is left. cgroup.kill takes every leaf.
[ -z "$1" ] || echo 1 >"$1/cgroup.kill"
sessions=
for e in $held; do
	k=${e%%:*} r=${e#*:}
	id=${r%%:*} start=${r#*:}
	# A leader's number held by a process with another start time was
	# reused: that range ended long ago.
	if stat "$id"; then
		set -- $s
		[ "${20}" = "$start" ] || continue
	fi
	if [ "$k" = g ]; then kill -9 "-$id"; else sessions="$sessions $id"; fi
done
[ -n "$sessions" ] || exit 0
for f in /proc/[0-9]*; do
	p=${f#/proc/}
	stat "$p" || continue
	set -- $s
	for sid in $sessions; do
		[ "$4" != "$sid" ] || kill -9 "$p"
	done
done
exit 0
