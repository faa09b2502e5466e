#!/bin/sh
# Installs ZooKeeper 3.8 and a Java runtime from Debian's `zookeeper` package,
# for the tests that run against a real server (zkserver, gozk, difftest,
# benchmarks). Run it as root on a Debian (or Ubuntu) machine. It is
# non-interactive and idempotent: when the package is already installed it
# checks the files the tests need and exits without touching apt.
set -eu

have_zookeeper() {
	dpkg-query -W -f='${Status}\n' zookeeper 2>/dev/null | grep -q '^install ok installed$' &&
		[ -f /usr/share/java/zookeeper.jar ] &&
		command -v java >/dev/null 2>&1
}

if have_zookeeper; then
	echo "install-zookeeper: zookeeper $(dpkg-query -W -f='${Version}' zookeeper) already installed"
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "install-zookeeper: must run as root (try: sudo $0)" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# The package's post-install step may try to start a system service; the
# tests never use it (they start their own servers on free ports).
apt-get install -y -q --no-install-recommends zookeeper

if ! have_zookeeper; then
	echo "install-zookeeper: zookeeper installed, but /usr/share/java/zookeeper.jar or java is missing" >&2
	exit 1
fi
echo "install-zookeeper: installed zookeeper $(dpkg-query -W -f='${Version}' zookeeper)"
