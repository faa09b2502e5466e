package explore

// The kinds of violation the machines record (world.violate's first
// argument): a short, stable name each, which a failing check reports
// (VIOLATION: <kinds>) and a flaw's Want matches. violate takes a kind,
// so a kind is one of these constants (or a literal, which a reviewer
// would move here), never a string built at run time.
type kind string

// Every family.
const (
	// kindLiveness: once faults stopped, a client did not finish what it was
	// doing within the liveness bound (harness.go's liveness phase).
	kindLiveness kind = "liveness"

	// kindLivelock: the simulator stepped without virtual time passing, or a
	// client kept making calls that could not be sent (harness.go, spin.go).
	kindLivelock kind = "livelock"

	// kindUnexplainedError: a call returned an error that neither its
	// session's end, its context nor a fault explains (outcome.go).
	kindUnexplainedError kind = "unexplained error"

	// kindRenewedSession: a call that began on one session returned success on
	// another, after its Renewing renewed the expired session (outcome.go,
	// queue_renew.go).
	kindRenewedSession kind = "renewed session"

	// kindRetriedAfterTheEnd: a client resent a request after it learnt,
	// waiting to retry a connection loss, that its session had ended
	// (retrycheck.go).
	kindRetriedAfterTheEnd kind = "retried after the end"

	// kindRetriedTooSoon: a client repeated a request after a connection loss
	// before its backoff elapsed (retrycheck.go).
	kindRetriedTooSoon kind = "retried too soon"

	// kindRetriedTooLate: a client repeated a request after a connection loss
	// later than its backoff and the connection's return allow
	// (retrycheck.go).
	kindRetriedTooLate kind = "retried too late"

	// kindAuthFailureIgnored: a call waiting out a connection loss returned
	// nil though its client failed to authenticate (authfail.go).
	kindAuthFailureIgnored kind = "auth failure ignored"

	// kindProtectedName: a recipe created a node whose name is not Curator's
	// protected form _c_<GUID>-<name> (names.go).
	kindProtectedName kind = "protected name"

	// kindOrphan: a contender node belongs to a process that neither acquires
	// nor holds, or to a protected create that returned without it.
	kindOrphan kind = "orphan"
)

// The lock family (locks, read-write locks, semaphores; the election shares the exclusion kinds).
const (
	// kindTwoHolders: two processes hold an exclusive hold at once (or one
	// exclusively while others share it).
	kindTwoHolders kind = "two holders"

	// kindTooManyHolders: more processes hold a semaphore's leases than its
	// maximum.
	kindTooManyHolders kind = "too many holders"

	// kindTokenWentBack: an exclusive hold was granted a token not above the
	// last one granted.
	kindTokenWentBack kind = "token went back"

	// kindTwoWriters: the protected resource accepted a write with a token
	// older than one it had accepted (violations.go).
	kindTwoWriters kind = "two writers"

	// kindReadersQueue: a reader with only readers' nodes ahead of it waits
	// for the read-write lock.
	kindReadersQueue kind = "readers queue"

	// kindHoldNotLost: a hold whose session ended, or whose client failed to
	// authenticate, does not say it is gone.
	kindHoldNotLost kind = "hold not lost"

	// kindHoldState: a hold's state (Held, Doubtful, Lost, Released, Watch,
	// Done) does not tell the truth about its node and session.
	kindHoldState kind = "hold state"

	// kindAcquireResult: Lock, TryLock or Acquire returned what it may not, or
	// left a hold that disagrees with what it returned.
	kindAcquireResult kind = "acquire result"

	// kindReleaseResult: Unlock or Release returned nil but the hold, its
	// Guard or its node still say it is held.
	kindReleaseResult kind = "release result"

	// kindEndedHoldNotReleased: Unlock or Release of a hold whose session
	// ended returned an error: such a hold counts as released.
	kindEndedHoldNotReleased kind = "ended hold not released"

	// kindAPIResult: a lock API call returned something other than what its
	// hold's state calls for (a second Unlock, a call on a new lock).
	kindAPIResult kind = "api result"

	// kindGuard: Guard returned an Op while not held or leading, or no Op
	// while held or leading.
	kindGuard kind = "guard"

	// kindLocker: the sync.Locker of a lock panicked with something other than
	// an error.
	kindLocker kind = "locker"

	// kindNewLock: a new lock's state, key, token or channels are not those of
	// a lock never acquired.
	kindNewLock kind = "new lock"

	// kindUnlockNothing: Guard of a process that holds nothing did not return
	// ErrNotHeld.
	kindUnlockNothing kind = "unlock nothing"

	// kindNewSemaphore: NewSemaphore accepted bad arguments, or refused good
	// ones.
	kindNewSemaphore kind = "new semaphore"

	// kindForeignNodes: a semaphore's acquisition returned
	// recipes.ErrForeignNodes though no node its layout refuses was in its
	// directory during the call, or took a lease (or failed otherwise)
	// while one was there throughout (lock_semaphore.go).
	kindForeignNodes kind = "foreign nodes"

	// kindProtectedCreate: a protected create (CreateProtectedSequential)
	// returned a node other than its own in the documented form, or the wrong
	// error.
	kindProtectedCreate kind = "protected create"

	// kindSequence: SequenceOf parsed a name that is not a sequential node's.
	kindSequence kind = "sequence"
)

// The election family.
const (
	// kindLeaderNotFirst: a process leads while its candidate node is not the
	// first candidate.
	kindLeaderNotFirst kind = "leader not first"

	// kindHeldWithoutNode: a process says it leads (Held) though its candidate
	// node is gone and it is connected and told everything.
	kindHeldWithoutNode kind = "held without node"

	// kindDeletedAnothersNode: a process deleted a node of another session.
	kindDeletedAnothersNode kind = "deleted another's node"

	// kindElectionAPI: Leader, Campaign, Resign, Proclaim, Resume or a third
	// party's call returned what it may not.
	kindElectionAPI kind = "election API"

	// kindLeader: Leader read the election's directory again and again with
	// nothing changed.
	kindLeader kind = "leader"

	// kindObserve: Observe reported a wrong leader, closed too early, used a
	// renewed session, polled with nothing changed or lagged behind the
	// leader.
	kindObserve kind = "observe"
)

// The queue family (FIFO, priority and locking queues).
const (
	// kindDuplicateDelivery: an item was delivered more than once.
	kindDuplicateDelivery kind = "duplicate delivery"

	// kindItemQueuedTwice: two nodes of one Offer's item were queued at
	// once (an Offer added its item again after a lost reply).
	kindItemQueuedTwice kind = "item queued twice"

	// kindLostItems: items offered were never delivered (or, in a locking
	// queue, never acknowledged) and are gone from the queue.
	kindLostItems kind = "lost items"

	// kindFIFOOrder: an item was removed while an earlier item was still
	// queued.
	kindFIFOOrder kind = "FIFO order"

	// kindPriorityOrder: an item was delivered while one of higher priority
	// was waiting.
	kindPriorityOrder kind = "priority order"

	// kindPeekOrder: Peek returned an item while an earlier one was queued
	// throughout.
	kindPeekOrder kind = "peek order"

	// kindEmptyWhileQueued: a call found the queue empty though it was not
	// empty at any time during the call.
	kindEmptyWhileQueued kind = "empty while queued"

	// kindWrongLength: Len counted a number of items other than those queued
	// throughout.
	kindWrongLength kind = "wrong length"

	// kindGarbageDelivered: a call delivered or peeked data no Offer wrote.
	kindGarbageDelivered kind = "garbage delivered"

	// kindItemData: Take returned an item whose data no Offer wrote.
	kindItemData kind = "item data"

	// kindDataWithError: a call returned item data together with an error.
	kindDataWithError kind = "data with error"

	// kindUnexpectedError: a queue call returned an error its session and
	// context do not explain.
	kindUnexpectedError kind = "unexpected error"

	// kindWithdrawnItemQueued: an Offer was cancelled and its item is still
	// queued.
	kindWithdrawnItemQueued kind = "withdrawn item queued"

	// kindNodeName: a node in a queue's directory is not named as documented.
	kindNodeName kind = "node name"

	// kindACL: a queue node has an ACL other than the queue's.
	kindACL kind = "ACL"

	// kindReceipts: a session owns more than one receipt in a queue's
	// directory.
	kindReceipts kind = "receipts"

	// kindRefusedCallWaits: a call still waits, with nothing in flight, after
	// the server refused to make its directory.
	kindRefusedCallWaits kind = "refused call waits"

	// kindItemWithoutClaim: a locking queue's Take returned an item its
	// session owns no claim on.
	kindItemWithoutClaim kind = "item without claim"

	// kindCallOnAnItemNotHeld: Ack or Release succeeded (or failed other than
	// with ErrClaimLost) on an item acknowledged or released before.
	kindCallOnAnItemNotHeld kind = "call on an item not held"

	// kindCallOnALostClaim: Ack or Release succeeded after a third party
	// deleted its claim.
	kindCallOnALostClaim kind = "call on a lost claim"

	// kindAckOfADeletedItem: Ack succeeded though a third party had deleted
	// the item.
	kindAckOfADeletedItem kind = "Ack of a deleted item"

	// kindAppliedAckReportedLost: Ack returned an error after a lost reply,
	// though the Ack was applied.
	kindAppliedAckReportedLost kind = "applied Ack reported lost"

	// kindClaimLeftBehind: a process with nothing under way still owns a
	// claim.
	kindClaimLeftBehind kind = "claim left behind"

	// kindClaimLostSaid: Release under a done context said the claim was lost
	// while its session owned it.
	kindClaimLostSaid kind = "claim lost said"
)

// The barrier family (barrier, double barrier, start barrier).
const (
	// kindSetNotSet: Set returned nil but the barrier is not set.
	kindSetNotSet kind = "set not set"

	// kindRefusedBarrierSet: Set returned nil where the server refuses it (a
	// bad ACL, say).
	kindRefusedBarrierSet kind = "refused barrier set"

	// kindRemovedStillSet: Remove returned nil but the barrier is set.
	kindRemovedStillSet kind = "removed still set"

	// kindPassedUnseen: Wait returned nil, but the last exists it sent was
	// not answered "unset" (by its member: on an ensemble, a lagging one).
	kindPassedUnseen kind = "passed unseen"

	// kindPassedASetBarrier: Wait returned while the barrier it began under is
	// still set.
	kindPassedASetBarrier kind = "passed a set barrier"

	// kindBadArguments: New accepted bad arguments, or refused good ones.
	kindBadArguments kind = "bad arguments"

	// kindPassedEarly: a member passed a group barrier before enough members
	// arrived.
	kindPassedEarly kind = "passed early"

	// kindEnteredWithoutANode: a member passed a group barrier without a
	// member node.
	kindEnteredWithoutANode kind = "entered without a node"

	// kindEnteredAClosedBarrier: a member passed a group barrier whose gate
	// node is not there.
	kindEnteredAClosedBarrier kind = "entered a closed barrier"

	// kindMemberLeftBehind: Enter failed but left its member node.
	kindMemberLeftBehind kind = "member left behind"

	// kindLeftWithANode: Leave returned nil but its member node is still
	// there.
	kindLeftWithANode kind = "left with a node"

	// kindLeftEarly: a member left the double barrier before every member
	// began to leave.
	kindLeftEarly kind = "left early"

	// kindLeftAnOpenRound: Leave returned nil while its round's ready node is
	// still there.
	kindLeftAnOpenRound kind = "left an open round"

	// kindGateWritten: a member wrote to the gate node (start or ready) when
	// it should not.
	kindGateWritten kind = "gate written"

	// kindTwoMemberNodes: a session has more than one member node.
	kindTwoMemberNodes kind = "two member nodes"

	// kindMemberNodeGone: a member passed the barrier and has not left, but
	// its member node is gone.
	kindMemberNodeGone kind = "member node gone"

	// kindCleanupRanOn: a cancelled Enter still cleans up, with nothing in
	// flight, well after its client heard its session ended or its
	// connection back.
	kindCleanupRanOn kind = "cleanup ran on"

	// kindCleanupGaveUpEarly: an Enter returned with its connection down,
	// leaving the member node of its live session.
	kindCleanupGaveUpEarly kind = "cleanup gave up early"

	// kindTwoLeaders: two electors lead on live sessions (flaws25.go).
	kindTwoLeaders kind = "two leaders"

	// kindDoneTooEarly: a worker found the work directory empty while an
	// item created before it looked was still there (flaws25.go).
	kindDoneTooEarly kind = "done too early"
)
