// Package clients proves zksim's ZooKeeper wire server with real, unchanged
// ZooKeeper clients from other languages. It has no API: its tests start
// the wire server in-process, point a client program at it and check the
// program's exit status and output.
//
//   - kazoo 2.8 (Debian python3-kazoo): testdata/kazoo_test.py, a Python
//     unittest file run by /usr/bin/python3 one test per process — Lock,
//     Election, Queue and LockingQueue, Barrier and DoubleBarrier, data and
//     children watches, session expiry forced through the control endpoint.
//   - Curator 5.4 (Debian libcurator-recipes-java): testdata/CuratorRecipes.java,
//     compiled with javac by the test — InterProcessMutex, LeaderLatch,
//     DistributedQueue, session expiry forced through the control endpoint.
//   - zkCli.sh from Debian's zookeeper package: create, ls, get, set, delete
//     as one-shot commands, and data and child watches in an interactive
//     session.
//   - the README's "Use zksim from any language" snippets (go-zookeeper,
//     kazoo, Curator), extracted from README.md and run as written.
//
// Every program runs against the wire server and against a real ZooKeeper
// 3.8 (zkserver), which shows the programs themselves are right. The
// programs read the server address from ZK_ADDR and the control URL from
// ZKSIM_CONTROL; against the real server ZKSIM_CONTROL is unset and the
// scenarios that need it skip.
//
// A test whose tool is missing (python3-kazoo, a JDK and the Curator jars,
// zkCli.sh) skips with the apt-get line that installs it, except under
// CI=true, where it fails: .ci/run installs them all.
package clients
