#!/usr/bin/env bats
# make install / make uninstall into a DESTDIR (issue 7): every file where it belongs with its
# mode, the unit accepted by systemd-analyze verify, the udev rules' syntax and modalias, the man
# pages free of groff/man warnings, bash completion, socket activation of the installed daemon,
# /etc/tbrdmad.conf kept when changed, and nothing left behind by uninstall.
bats_require_minimum_version 1.5.0

setup_file() {
	load helpers
	export D KVER MULTIARCH
	D=$(mktemp -d /tmp/install-bats.XXXXXX)
	KVER=$(make -s -C "$TOP" --no-print-directory -f Makefile -f - print-kver <<< \
		'print-kver: ; @echo $(KVER)')
	MULTIARCH=$(cc -print-multiarch 2> /dev/null || echo x86_64-linux-gnu)
	make -s -C "$TOP" install DESTDIR="$D" > "$D.log" 2>&1 || {
		cat "$D.log" >&2
		return 1
	}
}

teardown_file() {
	rm -rf "$D" "$D.log" "$D.verify"
}

setup() {
	load helpers
	load_libs
}

# expected files (relative to DESTDIR) with their modes, PREFIX=/usr/local
files() {
	cat <<-EOT
	755 /usr/local/sbin/tbrdmad
	755 /usr/local/bin/tbctl
	644 /lib/modules/$KVER/updates/tbrdma.ko
	755 /usr/lib/$MULTIARCH/libibverbs/libtbrdma-rdmav$("$TOP/provider/pabi-check" installed --print-pabi | tail -1 | cut -d' ' -f1).so
	644 /etc/libibverbs.d/tbrdma.driver
	644 /usr/local/lib/systemd/system/tbrdmad.service
	644 /usr/local/lib/systemd/system/tbrdmad.socket
	644 /usr/local/lib/udev/rules.d/70-tbrdma.rules
	644 /usr/local/lib/udev/rules.d/90-tbrdma-eth.rules
	644 /usr/local/lib/systemd/network/70-tbrdma.link
	644 /usr/local/lib/modprobe.d/tbrdma.conf
	644 /usr/local/share/man/man8/tbrdmad.8
	644 /usr/local/share/man/man8/tbctl.8
	644 /usr/local/share/man/man5/tbrdmad.conf.5
	644 /usr/local/share/bash-completion/completions/tbctl
	644 /etc/tbrdmad.conf
	EOT
}

@test "install: every file, with its mode, and nothing else" {
	local mode path
	while read -r mode path; do
		[ -f "$D$path" ] || fail "missing $path"
		[ "$(stat -c %a "$D$path")" = "$mode" ] || fail "$path: mode $(stat -c %a "$D$path"), want $mode"
	done < <(files)
	diff <(files | awk '{print $2}' | sort) <(cd "$D" && find . -not -type d | sed 's/^\.//' | sort)
}

@test "install: the installed programs run" {
	run "$D/usr/local/sbin/tbrdmad" --version
	assert_success
	assert_output --partial "tbrdmad "
	run "$D/usr/local/bin/tbctl" --help
	assert_success
	cmp "$TOP/tbrdmad/tbrdmad.conf" "$D/etc/tbrdmad.conf"
}

@test "tbrdmad.service: ExecStart is the installed path, Type=notify, watchdog, hardening" {
	local u=$D/usr/local/lib/systemd/system/tbrdmad.service
	grep -qx 'ExecStart=/usr/local/sbin/tbrdmad' "$u"
	! grep -q '@[A-Z]*@' "$u"
	for kv in Type=notify WatchdogSec=30s Restart=on-failure ProtectSystem=strict ProtectHome=yes \
		PrivateTmp=yes NoNewPrivileges=yes CapabilityBoundingSet=CAP_NET_ADMIN \
		AmbientCapabilities=CAP_NET_ADMIN RuntimeDirectory=tbrdmad StateDirectory=tbrdmad \
		"RestrictAddressFamilies=AF_UNIX AF_NETLINK AF_INET AF_INET6"; do
		grep -qx "$kv" "$u" || fail "no $kv"
	done
}

@test "systemd-analyze verify accepts the installed units" {
	command -v systemd-analyze > /dev/null || skip "no systemd-analyze"
	# verify checks that ExecStart exists: point it into DESTDIR
	mkdir -p "$D.verify"
	sed "s|^ExecStart=|ExecStart=$D|" "$D/usr/local/lib/systemd/system/tbrdmad.service" \
		> "$D.verify/tbrdmad.service"
	cp "$D/usr/local/lib/systemd/system/tbrdmad.socket" "$D.verify/"
	cd "$D.verify"
	run systemd-analyze verify --man=no ./tbrdmad.service ./tbrdmad.socket
	assert_success
	assert_output ""
}

@test "udev rules: syntax, our modalias, SYSTEMD_WANTS on tbrdma_link devices" {
	local r=$D/usr/local/lib/udev/rules.d/70-tbrdma.rules
	if udevadm verify --help > /dev/null 2>&1; then	# systemd >= 254
		run udevadm verify "$r"
		assert_success
	fi
	# every rule (continuations joined): comma-separated KEY[{ATTR}] OP "VALUE"
	run python3 - "$r" <<-'PY'
	import re, sys
	keys = {"ACTION", "SUBSYSTEM", "ENV", "TAG", "RUN", "GOTO", "LABEL", "KERNEL", "ATTR", "DRIVER"}
	tok = re.compile(r'\s*([A-Z]+)(\{[^}]+\})?\s*(==|!=|\+=|-=|:=|=)\s*"([^"]*)"\s*(,|$)')
	text = open(sys.argv[1]).read().replace("\\\n", "")
	labels, gotos, bad = set(), set(), 0
	for n, line in enumerate(text.splitlines(), 1):
	    if not line.strip() or line.lstrip().startswith("#"):
	        continue
	    pos = 0
	    while pos < len(line):
	        m = tok.match(line, pos)
	        if not m or m.group(1) not in keys:
	            print(f"rule {n}: cannot parse at: {line[pos:]!r}"); bad = 1; break
	        if m.group(1) == "LABEL": labels.add(m.group(4))
	        if m.group(1) == "GOTO": gotos.add(m.group(4))
	        pos = m.end()
	for g in gotos - labels:
	    print(f"GOTO {g} without its LABEL"); bad = 1
	sys.exit(bad)
	PY
	assert_success
	grep -q 'SUBSYSTEM=="tbrdma", ENV{DEVTYPE}=="tbrdma_link", TAG+="systemd"' "$r"
	grep -q 'ENV{SYSTEMD_WANTS}+="tbrdmad.service"' "$r"
	# the module's Thunderbolt service alias is what the rule matches
	local alias
	alias=$(modinfo -F alias "$D/lib/modules/$KVER/updates/tbrdma.ko" | grep '^tbsvc:')
	[[ $alias == tbsvc:ktbrdmap* ]] || fail "module alias $alias"
	grep -q 'ENV{MODALIAS}=="tbsvc:ktbrdmap\*"' "$r"
}

@test "udev eth rule: syntax, opt-in by TBRDMA_ETH, binds with the installed tbctl" {
	local r=$D/usr/local/lib/udev/rules.d/90-tbrdma-eth.rules
	if udevadm verify --help > /dev/null 2>&1; then	# systemd >= 254
		run udevadm verify "$r"
		assert_success
	fi
	run grep -c '@' "$r"
	assert_output 0
	# only "add" of net devices marked TBRDMA_ETH reach the RUN lines
	run python3 - "$r" <<-'PY'
	import sys
	lines = [l for l in open(sys.argv[1]).read().replace("\\\n", "").splitlines()
	         if l.strip() and not l.lstrip().startswith("#")]
	gates = ['ACTION!="add", GOTO="tbrdma_eth_end"', 'SUBSYSTEM!="net", GOTO="tbrdma_eth_end"',
	         'ENV{TBRDMA_ETH}!="?*", GOTO="tbrdma_eth_end"']
	assert lines[:3] == gates, lines[:3]
	assert lines[-1] == 'LABEL="tbrdma_eth_end"', lines[-1]
	runs = [l for l in lines if "RUN" in l]
	assert runs[0] == 'RUN{builtin}+="kmod load tbrdma"', runs[0]
	assert 'RUN+="/usr/local/bin/tbctl eth bind $name $env{TBRDMA_ETH}"' in runs, runs
	assert runs[-1] == 'RUN+="/sbin/ip link set dev $name up"', runs[-1]
	PY
	assert_success
}

@test "70-tbrdma.link: tbrN keep the module's MAC (no persistent MAC from the machine-id)" {
	local l=$D/usr/local/lib/systemd/network/70-tbrdma.link
	run grep -v '^#' "$l"
	assert_success
	assert_line "OriginalName=tbr*"
	assert_line "MACAddressPolicy=none"
	# it sorts before systemd's 99-default.link, which would match tbrN otherwise
	[[ $(basename "$l") < 99-default.link ]]
}

@test "man pages: sections present, no groff or man warnings" {
	local f out
	for f in man8/tbrdmad.8 man8/tbctl.8 man5/tbrdmad.conf.5; do
		f=$D/usr/local/share/man/$f
		out=$(groff -man -ww -z -Tutf8 "$f" 2>&1)
		[ -z "$out" ] || fail "groff: $out"
		out=$(MANWIDTH=80 man --warnings -l "$f" 2>&1 > /dev/null)
		[ -z "$out" ] || fail "man: $out"
		run lexgrog "$f"
		assert_success
		out=$(MANWIDTH=80 man -l "$f" 2> /dev/null)
		for s in NAME SYNOPSIS DESCRIPTION "SEE ALSO"; do
			grep -q "^$s" <<< "$out" || fail "$f: no $s"
		done
	done
	for f in tbrdmad.8 tbctl.8; do
		out=$(MANWIDTH=80 man -l "$D/usr/local/share/man/man8/$f" 2> /dev/null)
		for s in OPTIONS "EXIT STATUS" FILES EXAMPLES; do
			grep -q "^$s" <<< "$out" || fail "$f: no $s"
		done
	done
}

@test "bash completion: sources, completes verbs, rail's sub-commands and options" {
	run bash -c '
		PATH=$1/usr/local/bin:$PATH
		source "$1/usr/local/share/bash-completion/completions/tbctl" || exit 1
		complete -p tbctl | grep -q _tbctl || exit 1
		c() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _tbctl
		      echo "$*|$(printf "%s\n" "${COMPREPLY[@]}" | sort | xargs)"; }
		c tbctl ra; c tbctl ""; c tbctl --j; c tbctl --json rail ""; c tbctl rail en
		c tbctl eth ""; c tbctl eth bind lo; c tbctl capture -w f --r; c tbctl capture -w f -c 1 -' _ "$D"
	assert_success
	assert_line "tbctl ra|rail rails"
	# every verb of tbctl --help (sorted), whatever verbs are added later
	local v
	v=$("$D/usr/local/bin/tbctl" --help | awk '/^Commands:/ { c = 1; next } /^$/ { c = 0 } c && /^  [a-z]/ { print $1 }' |
		sort | xargs)
	[[ $v == *"rail rails"*status*version* ]] || fail "tbctl --help lists: $v"
	assert_line "tbctl |$v"
	assert_line "tbctl --j|--json"
	assert_line "tbctl --json rail |disable enable"
	assert_line "tbctl rail en|enable"
	assert_line "tbctl eth |bind unbind"
	assert_line "tbctl eth bind lo|lo"
	assert_line "tbctl capture -w f --r|--rail"
	assert_line --regexp "^tbctl capture -w f -c 1 -\|.*--qpn.*-w"
}

@test "socket activation: the installed tbrdmad serves a socket passed by LISTEN_FDS" {
	command -v systemd-socket-activate > /dev/null || skip "no systemd-socket-activate"
	local s=$D.sock pid
	systemd-socket-activate -l "$s" "$D/usr/local/sbin/tbrdmad" --config /dev/null \
		--state-dir "$D.state" --genl-family tbrdma-absent > "$D.sa.log" 2>&1 &
	pid=$!
	for _ in $(seq 100); do [ -S "$s" ] && break; sleep 0.05; done
	run "$D/usr/local/bin/tbctl" --socket "$s" --json status
	kill "$pid" 2> /dev/null || true
	wait "$pid" 2> /dev/null || true
	local log
	log=$(cat "$D.sa.log")
	rm -rf "$s" "$D.state" "$D.sa.log"
	assert_success
	echo "$output" | jq -e '.ok and .method == "status" and .kernel.present == false'
	[[ $log == *"using the socket passed by systemd"* ]] || fail "log: $log"
}

@test "uninstall removes every file install put" {
	make -s -C "$TOP" uninstall DESTDIR="$D" > /dev/null
	run find "$D" -not -type d
	assert_success
	assert_output ""
}

@test "PREFIX=/usr, MODULES_LOAD=yes; a changed /etc/tbrdmad.conf is kept by install and uninstall" {
	local d=$D/usr-prefix
	mkdir -p "$d/etc"
	echo "[Daemon]" > "$d/etc/tbrdmad.conf"
	make -s -C "$TOP" install DESTDIR="$d" PREFIX=/usr MODULES_LOAD=yes > /dev/null
	grep -qx 'ExecStart=/usr/sbin/tbrdmad' "$d/usr/lib/systemd/system/tbrdmad.service"
	[ -x "$d/usr/sbin/tbrdmad" ] && [ -x "$d/usr/bin/tbctl" ]
	[ -f "$d/usr/lib/udev/rules.d/70-tbrdma.rules" ]
	[ -f "$d/usr/share/man/man8/tbctl.8" ]
	grep -qx tbrdma "$d/usr/lib/modules-load.d/tbrdma.conf"
	[ "$(cat "$d/etc/tbrdmad.conf")" = "[Daemon]" ]
	make -s -C "$TOP" uninstall DESTDIR="$d" PREFIX=/usr > /dev/null
	run find "$d" -not -type d
	assert_output "$d/etc/tbrdmad.conf"
}
