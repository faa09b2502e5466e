// Package clients proves zksim's ZooKeeper wire server with real, unchanged
// ZooKeeper clients from other languages. It has no API: its tests start
// the wire server in-process, point a client program at it and check the
// program's exit status and output.
//
//   - kazoo 2.8 (Debian python3-kazoo): testdata/kazoo_test.py, a Python
//     unittest file run by /usr/bin/python3 one test per process — Lock,
//     Election, Queue and LockingQueue, Barrier and DoubleBarrier, data and
//     children watches, transactions, digest ACLs, four-letter words, a
//     session expired by a second client closing it;
//     and through the control endpoint: session expiry (LOST, the ephemeral
//     and the lock gone), a dropped connection, a lost reply, a dropped
//     request, a pause, delayed replies. testdata/kazoo_data.py prints
//     what kazoo's gets, Counter, DataWatch and TreeCache see of null and
//     empty data; its transcript must be the same on both servers. kazoo's
//     reconfig raises UnimplementedError with reconfigEnabled on and dies
//     on ReconfigDisabled without it, on both servers alike.
//     testdata/kazoo_sasl_test.py: kazoo with SASL DIGEST-MD5 (pure-sasl,
//     Debian python3-pure-sasl) as a user of testdata/jaas.conf, with a
//     wrong password and as an unknown user (AUTH_FAILED), and the
//     superDigest, against servers given that JAAS file; zkCli.sh's whoami
//     as that user from a JAAS Client section (clients/sasl_test.go).
//   - Curator 5.4 (Debian libcurator-recipes-java): testdata/CuratorRecipes.java,
//     compiled with javac by the test and run in one JVM per server —
//     InterProcessMutex, LeaderLatch, DistributedQueue, CuratorCache
//     (persistent recursive watches), InterProcessSemaphoreV2,
//     DistributedDoubleBarrier, transactions, getEphemerals,
//     getAllChildrenNumber, whoAmI, sync and containers; and through the
//     control endpoint: session expiry,
//     a dropped connection (watches restored by setWatches, the latch
//     leading again), a lost create reply that Curator's protected create
//     recovers from, and a paused leader whose LeaderLatch steps down and
//     whose session expires while the other latch takes over.
//   - zkCli.sh from Debian's zookeeper package: create, ls, get, set, delete
//     as one-shot commands; data, child and exists watches in an
//     interactive session; a script with containers, getAllChildrenNumber,
//     getEphemerals, whoami, addauth and setAcl/getAcl, sync, addWatch and
//     removewatches.
//   - interop (interop_test.go, testdata/CuratorInterop.java and
//     testdata/kazoo_interop.py): for each of lock.Mutex, lock.RWMutex,
//     lock.Semaphore and election.Election, two Go clients in the Curator
//     or kazoo layout (WithLayout) and a Curator or kazoo program with two
//     clients of the matching recipe take turns on one path, with faults
//     from the control endpoint (expiry, dropped connection, lost reply),
//     and no two holders may hold at once: under each hold a client marks
//     it with a multi that checks its hold node, and a mark counts against
//     another only while both hold nodes exist together (a multi of two
//     checks). Against the real ZooKeeper the same runs without faults.
//   - ensembles (ensemble_test.go): go-zookeeper, kazoo
//     (testdata/kazoo_ensemble.py) and Curator (testdata/CuratorEnsemble.java),
//     each given the three members' addresses of a zksim serve -servers 3
//     process, ride
//     out a leader failover and the crash of their member with their
//     session and ephemeral; a client of a follower made to lag reads stale
//     data, and the leader's after a sync that returns once the follower
//     caught up. There is no real ensemble to compare with here: the
//     ensemble conformance cases do that (package conformance).
//   - the README's "Use zksim from any language" snippets (go-zookeeper,
//     kazoo, Curator), extracted from README.md and run as written.
//
// Every program runs against the wire server (zkwire.NewTestServer) and
// against a real ZooKeeper 3.8 (zkserver), which shows the programs
// themselves are right. The programs read the server address from ZK_ADDR
// and the control URL from ZKSIM_CONTROL. The real server has no control
// endpoint: the scenarios that need one are not run against it (run by
// hand without ZKSIM_CONTROL, they skip).
//
// By hand, against any server:
//
//	cd clients/testdata
//	ZK_ADDR=127.0.0.1:2181 /usr/bin/python3 kazoo_test.py -v
//	javac -cp /usr/share/java/curator-recipes.jar -d /tmp/c CuratorRecipes.java
//	ZK_ADDR=127.0.0.1:2181 java -cp /usr/share/java/curator-recipes.jar:/tmp/c CuratorRecipes mutex leader
//
// A test whose tool is missing (python3-kazoo, a JDK and the Curator jars,
// zkCli.sh) skips with the apt-get line that installs it, except under
// CI=true, where it fails: .ci/run installs them all.
package clients
