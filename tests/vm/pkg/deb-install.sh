# Issue 16's acceptance: the Debian packages on a clean Debian, as a user installs them. A clean
# root of the release (debootstrap, tests/vm/lib/setup-userspace pkg-RELEASE) booted on the
# release's own kernel; deb-install.setup installs `make deb`'s three packages there with apt in
# one VM (DKMS builds tbrdma.ko with the release's compiler) and enables tbrdmad; this script
# runs in two VMs booted from copies of that installed system, joined by 2 eth rails: only what
# the packages installed is used (the module from DKMS's updates/dkms, /usr/sbin/tbrdmad,
# /usr/bin/tbctl, the provider from libibverbs' directory; nothing of the tree but the integrity
# program and these scripts): udev binds the rails (an admin's rule), `systemctl enable --now
# tbrdmad` brings up the fabric, then perftest (ib_write_bw, ib_read_bw, ib_send_bw,
# ib_write_lat, ib_read_lat, ib_send_lat), rping -V and tests/progs/integrity run across; then
# both purge the packages and the root's file list is the one before the install. The next
# kernel is deb-kernel2's (one VM on the same installed system).
# Run by hand: TBR_VM_TESTS=$PWD/tests/vm/pkg tests/vm/run -j 1 deb-install[@pkg-bookworm]
# vm-kernel: pkg-trixie pkg-bookworm
# vm-init: systemd
# vm-count: 2
# vm-rails: 2
# vm-setup: 3600
# vm-timeout: 2400
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/pkg/files.lib"
export DEBIAN_FRONTEND=noninteractive
unset RDMAV_DRIVERS
other=b
[ "$VM_ROLE" = a ] || other=a
K=$(uname -r)
echo "kernel $K"
P=/root/pkgtest
T0=$SECONDS
el() { echo "$((SECONDS - T0))s"; }
S=$VM_SHARED
diag() {
	set +e
	ip -br link
	journalctl -b --no-pager -o short-monotonic -u systemd-udevd -u tbrdmad | tail -30
	dmesg | tail -20
	tbctl rails
	tbctl links
}

step "the installed system ($(el))"
for p in tbrdma-dkms tbrdmad ibverbs-provider-tbrdma; do
	dpkg-query -W -f '${Package} ${Version} ${db:Status-Abbrev}\n' "$p" | grep -q ' ii $' || fail "$p not installed"
done
[ "$(command -v tbctl)" = /usr/bin/tbctl ] || fail "tbctl is $(command -v tbctl)"
# the admin's local configuration: virtio NICs carry tbrdma0's eth rails (90-tbrdma-eth.rules)
cat > /etc/udev/rules.d/70-tbrdma-rails.rules <<'EOT'
SUBSYSTEM=="net", ACTION=="add", ATTR{address}=="52:54:*", ENV{TBRDMA_ETH}="tbrdma0", ENV{TBRDMA_ETH_MTU}="9000"
EOT
udevadm control --reload
# the NICs were there at boot, before the rule
udevadm trigger --subsystem-match=net --action=add
# (the rule loads tbrdma, whose device makes rdma-core load its ULP modules, ib_iser and rpcrdma
# among them: minutes under TCG on a loaded host; 60 s timed out at load ~9.5)
udevadm settle -t 300 || fail "the udev queue did not settle within 300 s"

step "systemctl enable --now tbrdmad ($(el))"
systemctl enable --now tbrdmad || { journalctl -u tbrdmad --no-pager; fail "enable --now"; }
systemctl is-active -q tbrdmad || fail "tbrdmad not active"
jqs() { tbctl --json status | jq -e "$1" > /dev/null; }
jqf() { tbctl --json fabric | jq -e "$1" > /dev/null; }
within 120 jqs '.summary.links_up==1 and .summary.rails_up==2'
within 60 jqf '(.hosts|length)==2 and .converged and .address!=null and ([.hosts[]|select(.address==null)]|length)==0'
tbctl status
tbctl rails
ko=$(modinfo -n tbrdma)
echo "tbrdma: $ko"
case $ko in */updates/dkms/tbrdma.ko*) ;; *) fail "the module is $ko, not DKMS's" ;; esac
# the loaded tbrdma is that file (the same build ID; files.lib says why not srcversion)
id_loaded=$(loaded_build_id tbrdma) || fail "no build ID of the loaded tbrdma"
id_file=$(file_build_id "$ko") || fail "no build ID in $ko"
echo "build ID: loaded $id_loaded, $ko $id_file"
[ "$id_loaded" = "$id_file" ] || fail "the loaded tbrdma is not the installed one"
ME=$(tbctl --json fabric | jq -r .address)
tbctl --json status > "$S/$VM_ROLE.status.json"
vm_signal up
vm_wait "$other.up" 180
theirs=$(jq -r '.devices[0].guid' "$S/$other.status.json")
PEER=$(tbctl --json fabric | jq -r --arg g "$theirs" '.hosts[]|select(.guid==$g)|.address')
[ -n "$PEER" ] && [ "$PEER" != null ] || fail "no address for the peer $theirs"
within 30 gid_index tbrdma0 "$ME"
GID=$(gid_index tbrdma0 "$ME")
echo "this host $ME (GID $GID), peer $PEER"
ping -c 2 -W 5 "$PEER" > /dev/null || fail "no IP over tbr0 to $PEER"
# the provider libibverbs loads is the package's
ibv_devinfo -d tbrdma0 | grep -E 'hca_id|transport|state' || fail "ibv_devinfo -d tbrdma0"

# listening: the server's TCP port is open (PORT empty: rdma_cm's listen, not seen by ss: 5 s)
listening() { [ -n "$(ss -ltnH "sport = :$1")" ]; }
# pair TAG CMD...: b serves CMD, a runs CMD PEER; the two meet through vm_signal/vm_wait
pair() {
	local tag=$1 t0 srv
	shift
	if [ "$VM_ROLE" = b ]; then
		timeout 300 "$@" > "/tmp/$tag.log" 2>&1 &
		srv=$!
		if [ -n "$PORT" ]; then within 60 listening "$PORT"; else sleep 5; fi
		vm_signal "$tag.listening"
		wait "$srv" || { cat "/tmp/$tag.log"; diag; fail "$tag server: $*"; }
		vm_signal "$tag.done"
	else
		vm_wait "b.$tag.listening" 120
		t0=$SECONDS
		timeout 300 "$@" "$PEER" > "/tmp/$tag.log" 2>&1 || { cat "/tmp/$tag.log"; diag; fail "$tag client: $*"; }
		echo "$tag: $* $PEER ($((SECONDS - t0)) s)"
		grep -E '^ *[0-9]+ +[0-9]+ ' "/tmp/$tag.log" | tr -s ' ' || true
		vm_wait "b.$tag.done" 120
	fi
}
PORT=18515
for tool in ib_write_bw ib_read_bw ib_send_bw; do
	step "$tool ($(el))"
	pair "$tool" "$tool" -d tbrdma0 -x "$GID" -F -s 65536 -n 200
	[ "$VM_ROLE" = b ] || grep -qE '^ *65536 +200 ' "/tmp/$tool.log" || fail "$tool: no result line"
done
for tool in ib_write_lat ib_read_lat ib_send_lat; do
	step "$tool ($(el))"
	pair "$tool" "$tool" -d tbrdma0 -x "$GID" -F -s 64 -n 200
	[ "$VM_ROLE" = b ] || grep -qE '^ *64 +200 ' "/tmp/$tool.log" || fail "$tool: no result line"
done

step "rping -V ($(el))"
PORT=
if [ "$VM_ROLE" = b ]; then
	pair rping rping -s -a "$ME" -C 50 -V
else
	pair rping rping -c -V -C 50 -a
	n=$(grep -c 'ping data' /tmp/rping.log || true)
	[ "$n" = 0 ] || echo "rping printed $n pings"
fi

step "tests/progs/integrity ($(el))"
PROG=$TBR_TOP/build/progs/integrity
[ -x "$PROG" ] || fail "$PROG not built (make)"
PORT=18600	# integrity's default --port
SEED=$(date +%s)
if [ "$VM_ROLE" = b ]; then
	pair integrity "$PROG" -d tbrdma0 -g "$GID" server
	grep -q "integrity server: ok" /tmp/integrity.log || { cat /tmp/integrity.log; fail "integrity server did not finish"; }
else
	pair integrity "$PROG" -d tbrdma0 -g "$GID" --seed "$SEED" --mib 16 client
	grep -q "integrity client: ok" /tmp/integrity.log || { cat /tmp/integrity.log; fail "integrity client did not finish (seed $SEED)"; }
fi
tbctl rails
tbctl counters
tbctl --json counters | jq -e '(.rails|length)==2 and ([.rails[]|select(.counters.tx_frames > 100)]|length)==2' > /dev/null ||
	fail "the traffic did not go over both rails"
# the admin's rule goes with the test, before the purge check
rm /etc/udev/rules.d/70-tbrdma-rails.rules
vm_signal traffic
vm_wait "$other.traffic" 300

step "apt purge ($(el))"
purge_packages
! systemctl is-active -q tbrdmad || fail "tbrdmad runs after the purge"
files_as_expected $P/files.before
# no wait for the other VM: its part after the traffic is its own
step "done ($(el))"
