package explore

import (
	"strings"
	"testing"
)

// allKinds is every kind of violation of kinds.go.
var allKinds = []kind{
	kindLiveness,
	kindLivelock,
	kindUnexplainedError,
	kindRenewedSession,
	kindRetriedAfterTheEnd,
	kindRetriedTooSoon,
	kindRetriedTooLate,
	kindAuthFailureIgnored,
	kindProtectedName,
	kindOrphan,
	kindTwoHolders,
	kindTooManyHolders,
	kindTokenWentBack,
	kindTwoWriters,
	kindReadersQueue,
	kindHoldNotLost,
	kindHoldState,
	kindAcquireResult,
	kindReleaseResult,
	kindEndedHoldNotReleased,
	kindAPIResult,
	kindGuard,
	kindLocker,
	kindNewLock,
	kindUnlockNothing,
	kindNewSemaphore,
	kindForeignNodes,
	kindProtectedCreate,
	kindSequence,
	kindLeaderNotFirst,
	kindHeldWithoutNode,
	kindDeletedAnothersNode,
	kindElectionAPI,
	kindLeader,
	kindObserve,
	kindDuplicateDelivery,
	kindItemQueuedTwice,
	kindLostItems,
	kindFIFOOrder,
	kindPriorityOrder,
	kindPeekOrder,
	kindEmptyWhileQueued,
	kindWrongLength,
	kindGarbageDelivered,
	kindItemData,
	kindDataWithError,
	kindUnexpectedError,
	kindWithdrawnItemQueued,
	kindNodeName,
	kindACL,
	kindReceipts,
	kindRefusedCallWaits,
	kindTwoLeaders,
	kindDoneTooEarly,
	kindItemWithoutClaim,
	kindCallOnAnItemNotHeld,
	kindCallOnALostClaim,
	kindAckOfADeletedItem,
	kindAppliedAckReportedLost,
	kindClaimLeftBehind,
	kindClaimLostSaid,
	kindSetNotSet,
	kindRefusedBarrierSet,
	kindRemovedStillSet,
	kindPassedUnseen,
	kindPassedASetBarrier,
	kindBadArguments,
	kindPassedEarly,
	kindEnteredWithoutANode,
	kindEnteredAClosedBarrier,
	kindMemberLeftBehind,
	kindLeftWithANode,
	kindLeftEarly,
	kindLeftAnOpenRound,
	kindGateWritten,
	kindTwoMemberNodes,
	kindMemberNodeGone,
	kindCleanupRanOn,
	kindCleanupGaveUpEarly,
}

// TestFlawsWantKnownKinds checks that the kinds are distinct and that
// every flaw wants kinds of kinds.go only.
func TestFlawsWantKnownKinds(t *testing.T) {
	known := map[kind]bool{}
	for _, k := range allKinds {
		if known[k] {
			t.Errorf("kind %q twice", k)
		}
		known[k] = true
	}
	for _, f := range Flaws {
		for _, k := range strings.Split(f.Want, "|") {
			if !known[kind(k)] {
				t.Errorf("flaw %s wants %q, not a kind of kinds.go", f.Name, k)
			}
		}
	}
}
