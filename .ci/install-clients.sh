#!/bin/sh
# Installs the real ZooKeeper clients that package clients runs against
# zksim's wire server, all from Debian: kazoo 2.8 (python3-kazoo, loaded by
# /usr/bin/python3, with pure-sasl for its SASL clients), Curator 5.4 and a JDK to compile against it (javac),
# zkCli.sh (the zookeeper package, which install-zookeeper.sh installs),
# and what the fixtures of clients/fixtures run under: pytest
# (python3-pytest) and JUnit 5 (junit5, with its console launcher).
# Run it as root on a Debian 12 machine. It is non-interactive and
# idempotent: when every package is installed it exits without touching apt.
set -eu

packages="python3-kazoo python3-pure-sasl python3-pytest libcurator-client-java libcurator-framework-java libcurator-recipes-java default-jdk-headless zookeeper junit5"

installed() {
	dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -q '^install ok installed$'
}

have_clients() {
	for p in $packages; do
		installed "$p" || return 1
	done
	[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import kazoo.client, puresasl.client, pytest' &&
		command -v javac >/dev/null 2>&1 &&
		[ -f /usr/share/java/curator-recipes.jar ] &&
		[ -f /usr/share/java/junit-platform-console-standalone.jar ] &&
		[ -x /usr/share/zookeeper/bin/zkCli.sh ]
}

if have_clients; then
	echo "install-clients: already installed: $packages"
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "install-clients: must run as root (try: sudo $0)" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends $packages

if ! have_clients; then
	echo "install-clients: installed $packages, but kazoo, pure-sasl, pytest, javac, the Curator or JUnit 5 jars or zkCli.sh is missing" >&2
	exit 1
fi
echo "install-clients: installed $packages"
