package property_test

import (
	"testing"

	"github.com/zksim/zksim/explore"
)

// The harness bites: each flawed recipe the ZooKeeper literature warns
// about (explore.Flaws) runs under the machine its family uses, and each
// test passes only when rapid finds the flaw (with the expected kind of
// violation) and shrinks it. The shrunk schedule is printed in the test
// log.

func TestFlawedLockRetriesCreateWithoutGUID(t *testing.T) {
	testFlaw(t, "LockRetriesCreateWithoutGUID")
}
func TestFlawedLockOrdersByFullName(t *testing.T)       { testFlaw(t, "LockOrdersByFullName") }
func TestFlawedHolderWritesWithoutFencing(t *testing.T) { testFlaw(t, "HolderWritesWithoutFencing") }
func TestFlawedElectionWithoutWatch(t *testing.T)       { testFlaw(t, "ElectionWithoutWatch") }
func TestFlawedQueueConsumerIgnoresFailedDelete(t *testing.T) {
	testFlaw(t, "QueueConsumerIgnoresFailedDelete")
}

// The flaws of issue 13 (explore/flaws13.go).

func TestFlawedDoubleBarrierLeavesEarly(t *testing.T) { testFlaw(t, "DoubleBarrierLeavesEarly") }
func TestFlawedRWLockReadersQueueBehindReaders(t *testing.T) {
	testFlaw(t, "RWLockReadersQueueBehindReaders")
}
func TestFlawedQueueLosesRemove(t *testing.T) { testFlaw(t, "QueueLosesRemove") }
func TestFlawedLockingQueueDeletesBeforeAck(t *testing.T) {
	testFlaw(t, "LockingQueueDeletesBeforeAck")
}
func TestFlawedHolderBlindToExpiry(t *testing.T) { testFlaw(t, "HolderBlindToExpiry") }

// testFlaw runs the flawed recipe called name, which must be caught, in
// parallel with the other flaws (phases_test.go).
func testFlaw(t *testing.T, name string) {
	t.Helper()
	for _, f := range explore.Flaws {
		if f.Name == name {
			inPhase(t, flawPhase)
			f.TestConcurrently(t)
			return
		}
	}
	t.Fatalf("no flaw %q in explore.Flaws", name)
}

// The flaw of issue 29 (explore/flaws29.go).

func TestFlawedLockKeepsNodeOfFailedCall(t *testing.T) { testFlaw(t, "LockKeepsNodeOfFailedCall") }

// The flaws of issue 25 (explore/flaws25.go): reads served by a lagging
// ensemble member, without a sync.

func TestFlawedElectorTrustsStaleRead(t *testing.T) { testFlaw(t, "ElectorTrustsStaleRead") }
func TestFlawedWorkerDoneFromStaleListing(t *testing.T) {
	testFlaw(t, "WorkerDoneFromStaleListing")
}
