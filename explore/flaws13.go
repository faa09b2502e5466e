package explore

import "pgregory.net/rapid"

// The flaws the sharper invariants, the swarm of calm-stretch faults and
// PCT of issue 13 exist to catch; TestFlawsOnRandomSeeds checks that each
// is caught at the CI budget on every one of N random seeds.
func init() {
	Flaws = append(Flaws,
		Flaw{Name: "DoubleBarrierLeavesEarly", Want: "left early|left an open round", Machine: Machine{cfg: worldConfig{clients: 3, faults: true}, newFamily: func(w *world, t *rapid.T) family {
			f := newGroupFamily(w, t, true, 0)
			f.earlyLeave = true
			return f
		}}},
		Flaw{Name: "RWLockReadersQueueBehindReaders", Want: "readers queue", Machine: Machine{cfg: worldConfig{clients: 3, faults: true}, newFamily: func(w *world, _ *rapid.T) family {
			return newLockFamily(w, queueingReaderKind, true, true)
		}}},
		Flaw{Name: "QueueLosesRemove", Want: "lost items", Machine: Machine{cfg: worldConfig{clients: 3, faults: true}, newFamily: func(w *world, _ *rapid.T) family {
			return newQueueFamily(w, lossyKind)
		}}},
		// Deleting the item outside the Ack loses it when the consumer
		// fails after the delete, and delivers it twice when the
		// consumer's claim was lost (its session expired) before the
		// delete: the Ack's multi would have failed then. Either is the
		// flaw.
		Flaw{Name: "LockingQueueDeletesBeforeAck", Want: "lost items|duplicate delivery", Machine: Machine{cfg: worldConfig{clients: 3, faults: true}, newFamily: func(w *world, _ *rapid.T) family {
			return newQueueFamily(w, eagerKind)
		}}},
		Flaw{Name: "HolderBlindToExpiry", Want: "two holders", Machine: Machine{cfg: worldConfig{clients: 2, faults: true}, newFamily: func(w *world, _ *rapid.T) family {
			return newLockFamily(w, staleHolderKind, true, true)
		}}},
	)
}
