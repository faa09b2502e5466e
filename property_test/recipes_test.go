package property_test

import (
	"testing"

	"pgregory.net/rapid"
)

// The real recipes under their machines, with every fault of the catalogue:
// each must pass with no violation.

func TestLockMutex(t *testing.T) {
	checkMachine(t, worldConfig{clients: 3, faults: true}, func(w *world, _ *rapid.T) family {
		return newLockFamily(w, mutexKind, true, true)
	})
}

func TestLockRWMutex(t *testing.T) {
	checkMachine(t, worldConfig{clients: 3, faults: true}, func(w *world, _ *rapid.T) family {
		return newLockFamily(w, rwKind, true, true)
	})
}

func TestLockSemaphore(t *testing.T) {
	checkMachine(t, worldConfig{clients: 4, faults: true}, func(w *world, _ *rapid.T) family {
		return newLockFamily(w, semaphoreKind, true, true)
	})
}

func TestElection(t *testing.T) {
	checkMachine(t, worldConfig{clients: 3, faults: true}, func(w *world, _ *rapid.T) family {
		return newLockFamily(w, electionKind, true, true)
	})
}

func TestElectionSingleNode(t *testing.T) {
	checkMachine(t, worldConfig{clients: 3, faults: true}, func(w *world, _ *rapid.T) family {
		return newLockFamily(w, singleNodeKind, true, true)
	})
}

func TestQueueFIFO(t *testing.T) {
	checkMachine(t, worldConfig{clients: 3, faults: true}, func(w *world, _ *rapid.T) family {
		return newQueueFamily(w, fifoKind)
	})
}

func TestQueuePriority(t *testing.T) {
	checkMachine(t, worldConfig{clients: 2, faults: true}, func(w *world, _ *rapid.T) family {
		return newQueueFamily(w, priorityKind)
	})
}

func TestQueueLocking(t *testing.T) {
	checkMachine(t, worldConfig{clients: 3, faults: true}, func(w *world, _ *rapid.T) family {
		return newQueueFamily(w, lockingKind)
	})
}

func TestBarrier(t *testing.T) {
	checkMachine(t, worldConfig{clients: 3, faults: true}, func(w *world, _ *rapid.T) family {
		return newBarrierFamily(w)
	})
}

func TestBarrierDouble(t *testing.T) {
	checkMachine(t, worldConfig{clients: 3, faults: true}, func(w *world, _ *rapid.T) family {
		return newGroupFamily(w, true)
	})
}

func TestBarrierStart(t *testing.T) {
	checkMachine(t, worldConfig{clients: 3, faults: true}, func(w *world, _ *rapid.T) family {
		return newGroupFamily(w, false)
	})
}
