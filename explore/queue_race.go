package explore

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"pgregory.net/rapid"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/recipes/queue"
	"github.com/zksim/zksim/zkmem"
)

// The locking queue's races on a held item (the action HeldRace). A
// consumer holding an item (the end "hold") is let go on, to acknowledge
// or release it, just after one of these, arranged on purpose because a
// run of random actions meets them rarely:
//
//   - "claim": a third party deletes its claim;
//   - "item": a third party deletes the item;
//   - "lost claim": its next multi (the Ack) is dropped before the server
//     sees it, and its claim is gone: after the connection loss Ack must
//     find the claim gone and the item still there;
//   - "lost item": the item is gone and the reply of the Ack's multi
//     (which fails on the item) is lost;
//   - "lost reply": the reply of the Ack's multi, which the server
//     applies, is lost: Ack must find the item gone and succeed ("after a
//     lost reply it checks whether the item is gone");
//   - "expired reply" (a holder on a Renewing): as "lost reply", and the
//     session expires as the loss arrives: the Ack, waiting for the
//     connection, must fail with ErrSessionExpired, not look on the new
//     session and succeed (checkSession);
//   - "expired check" (a holder on a Renewing): as "lost item", and the
//     session expires as the Ack's check of its claim after the loss (its
//     next getData) is on its way: the check fails with the session, and
//     so must the Ack (ErrClaimLost with ErrSessionExpired), not go on to
//     look for the item on the new session, find it gone and succeed on
//     an item a third party deleted (checkSession, lockingCall);
//   - "renewed hold" (a holder on a Renewing): its session expires while
//     it holds the item (the claim goes with it) and the Renewing goes on
//     with a new one; an idle consumer, if there is one, takes an item
//     and holds it (the same item, unless another comes first). The
//     holder's Ack or Release, on the new session, must fail with
//     ErrClaimLost, not delete the other consumer's claim with the item
//     and succeed ("call on a lost claim").
//
// The package documents the outcomes (Item.Ack, Item.Release): "It returns
// an error matching ErrClaimLost if our claim is gone (session expired, or
// the claim was deleted)", and Release "returns ErrClaimLost if our claim
// was already gone"; an Ack never succeeds on an item a third party
// deleted (lockingCall checks it), and no claim is left behind
// (checkClaims). The race runs only while every other consumer is idle,
// and no other consumer call begins until the holder's call returns
// (racer), so that no one can claim the item again before it ends.
var heldRaces = []string{"claim", "item", "lost claim", "lost item", "lost reply"}

// heldRace runs the action HeldRace: it makes a consumer hold an item if
// none does (an idle consumer takes one, offered first if the queue has
// no unclaimed item), then arranges a race drawn from heldRaces and lets
// the holder Ack or Release (drawn) and finish.
func (f *queueFamily) heldRace(t *rapid.T) {
	w := f.w
	held := f.ensureHold(t)
	if len(held) == 0 {
		return // not this time (a fault struck, say)
	}
	if rapid.IntRange(0, len(heldRaces)).Draw(t, "past held") == 0 {
		f.pastHeld(t)
		return
	}
	i := rapid.SampledFrom(held).Draw(t, "holder")
	c := w.clients[i]
	if c.partitioned || c.paused() {
		t.SkipNow() // its Ack could outlast the action
	}
	for _, o := range w.clients[1:] {
		if o != c && o.busy("") {
			t.SkipNow() // another consumer could claim the item again
		}
	}
	f.mu.Lock()
	it := f.held[i]
	f.mu.Unlock()
	data := string(it.Data())
	name := ""
	for _, n := range w.children(queueDir + "/items") {
		if d, _, err := w.observer.Get(w.ctx, queueDir+"/items/"+n); err == nil && string(d) == data {
			name = n
		}
	}
	claim := queueDir + "/claims/" + name
	if ok, _, _ := w.observer.Exists(w.ctx, claim); name == "" || !ok || !w.sessionLive(c) {
		t.SkipNow() // the item or its claim is gone already
	}
	races := heldRaces
	if c.renewing != nil {
		races = append(slices.Clip(races), "expired reply", "expired check", "renewed hold")
	}
	race := rapid.SampledFrom(races).Draw(t, "race")
	then := "ack"
	if race != "lost reply" && race != "expired reply" && race != "expired check" {
		then = rapid.SampledFrom([]string{"ack", "release"}).Draw(t, "then")
	}
	k, _ := itemNumber([]byte(data))
	f.mu.Lock()
	switch race {
	case "claim", "lost claim":
		f.claimDeletes++
		f.lostClaims[it] = true
	case "renewed hold":
		f.lostClaims[it] = true
	case "item", "lost item", "expired check":
		f.deleted[k] = true
	case "lost reply":
		f.lostReplies[it] = f.claimDeletes
	}
	f.holdThen[i] = then
	f.mu.Unlock()
	switch race {
	case "claim", "lost claim":
		w.inject(t, faults.DeleteNode(claim))
	case "item", "lost item", "expired check":
		w.inject(t, faults.DeleteNode(queueDir+"/items/"+name))
	}
	switch race {
	case "lost claim":
		w.inject(t, faults.DropNextRequest(c.conn.Index(), zkmem.OpMulti))
	case "lost item", "lost reply", "expired reply", "expired check":
		w.inject(t, faults.LoseNextReply(c.conn.Index(), zkmem.OpMulti))
	}
	var expire *expirePoint
	switch race {
	case "expired reply":
		expire = &expirePoint{op: "multi", after: true}
	case "expired check":
		expire = &expirePoint{op: "get"}
	}
	if expire != nil {
		f.mu.Lock()
		f.expireAts[c.idx] = expire
		f.mu.Unlock()
	}
	if race == "renewed hold" {
		old := c.session()
		w.inject(t, faults.Expire(old.Index()))
		w.runFor(t, 50*time.Millisecond)
		if cs := f.consumers(); c.session() != old && len(cs) > 0 {
			f.take(cs[rapid.IntRange(0, len(cs)-1).Draw(t, "taker")], false, "hold")
			w.runFor(t, 100*time.Millisecond)
		}
	}
	f.mu.Lock()
	if ch, ok := f.holds[i]; ok {
		close(ch)
		delete(f.holds, i)
		f.racer = c
	}
	f.mu.Unlock()
	if expire != nil {
		f.expireWhenHit(t, c, expire)
	}
	// Until the holder's call ends (a fault of the calm stretch may hold
	// it up): the race's outcome must be its alone. (After a lost Ack
	// reply, Ack takes a claim and an item both gone for its own multi
	// applied; had another consumer claimed and acknowledged the item
	// meanwhile, both would report it delivered.)
	for range heldRaceRuns {
		w.runFor(t, 100*time.Millisecond)
		if !c.busy("take") || w.violated() {
			break
		}
	}
}

// heldRaceRuns bounds the stretches of 100 ms HeldRace waits for the
// holder's call to end: past the session timeout and a delay fault.
const heldRaceRuns = 20

// finishHold ends a held item's call as the action HeldRace drew (an Ack,
// with a Release if it fails while the claim may be ours, or a Release),
// and records a violation if the Ack or Release succeeded although a third
// party had deleted the item's claim (the package promises ErrClaimLost
// then). It reports whether the item was acknowledged.
func (f *queueFamily) finishHold(ctx context.Context, c *client, it *queue.Item) (bool, error) {
	k, _ := itemNumber(it.Data())
	f.mu.Lock()
	then := f.holdThen[c.idx]
	delete(f.holdThen, c.idx)
	delete(f.held, c.idx)
	f.mu.Unlock()
	op, err := "Ack", error(nil)
	conn := began(c)
	if then == "release" {
		op = "Release"
		err, _ = f.release(ctx, c, it)
	} else {
		err = ackOrRelease(ctx, it)
	}
	f.checkSession(c, conn, ctx, op, err)
	f.mu.Lock()
	if f.racer == c {
		f.racer = nil
	}
	lost := f.lostClaims[it]
	deletesAt, lostReply := f.lostReplies[it]
	// An Ack that outlasted HeldRace's wait (no quorum, say) may meet a
	// later Delete action of the item or a claim: the multi whose reply
	// was lost then failed.
	touched := f.deleted[k] || f.claimDeletes != deletesAt
	delete(f.lostClaims, it)
	delete(f.lostReplies, it)
	f.mu.Unlock()
	if err == nil && lost {
		f.w.violate(kindCallOnALostClaim, "p%d's %s of item %d succeeded, but a third party had deleted its claim", c.idx, op, k)
	}
	// With its claim and item in place and no one else at work, an Ack
	// whose reply was lost was applied: it must say so, unless the call
	// or the session ended meanwhile.
	if lostReply && !touched && errors.Is(err, queue.ErrClaimLost) && ctx.Err() == nil && (conn == nil || conn == began(c)) && f.w.sessionLive(c) && c.conn.State() == zksim.StateConnected {
		f.w.violate(kindAppliedAckReportedLost, "p%d's Ack of item %d returned %v after a lost reply, but the Ack was applied", c.idx, k, err)
	}
	return then != "release", err
}

// release releases it for c's call, releasing again (under a context that
// cannot be cancelled) if the Release failed while the claim may still be
// ours; the item is done once released. It returns the first Release's
// error and the second's (again: nil if there was none, or it succeeded
// or found the claim lost).
func (f *queueFamily) release(ctx context.Context, c *client, it *queue.Item) (err, again error) {
	if err := it.Release(ctx); err != nil {
		f.checkError(c, "Release", err)
		if !errors.Is(err, queue.ErrClaimLost) {
			// as ackOrRelease
			if again := it.Release(context.WithoutCancel(ctx)); !errors.Is(again, queue.ErrClaimLost) {
				return err, again
			}
		}
		return err, nil
	}
	c.note("released item %s", it.Data())
	f.noteDone(c, it)
	return nil, nil
}

// pastHeld is HeldRace's other race (one in len(heldRaces)+1): while a
// consumer holds an item, an idle consumer calls TryTake with an unclaimed
// item queued behind the held one (offered first if there is none). It
// must claim that one, not report the queue empty: a claimed item is
// skipped (checkEmptyLocking, a holder claiming nothing more).
func (f *queueFamily) pastHeld(t *rapid.T) {
	w := f.w
	cs := f.consumers()
	if len(cs) == 0 {
		t.SkipNow()
	}
	c := cs[rapid.IntRange(0, len(cs)-1).Draw(t, "consumer")]
	if len(f.present()) <= len(w.children(queueDir+"/claims")) {
		p := w.clients[0]
		if p.paused() || p.busy("") {
			t.SkipNow()
		}
		f.offer(p, 0, false)
		w.runFor(t, 50*time.Millisecond)
	}
	f.take(c, false, "")
	w.runFor(t, 100*time.Millisecond)
}

// ensureHold returns the consumers that hold an item (the end "hold"),
// sorted; if none does, it has an idle consumer take one and hold it
// (offered first if the queue has no unclaimed item), and returns none if
// that has not happened after 100 ms.
func (f *queueFamily) ensureHold(t *rapid.T) []int {
	w := f.w
	w.sw.Enabled() // every client blocked: holds and busy are settled
	f.mu.Lock()
	held := slices.Sorted(maps.Keys(f.holds))
	f.mu.Unlock()
	if len(held) > 0 {
		return held
	}
	cs := f.consumers()
	if len(cs) == 0 || len(cs) < len(w.clients)-1 {
		t.SkipNow() // a consumer is busy, or none is awake
	}
	c := cs[rapid.IntRange(0, len(cs)-1).Draw(t, "holder")]
	if len(f.present()) <= len(w.children(queueDir+"/claims")) {
		p := w.clients[0]
		if p.paused() || p.busy("") {
			t.SkipNow()
		}
		f.offer(p, 0, false)
	}
	f.take(c, true, "hold")
	w.runFor(t, 100*time.Millisecond)
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Sorted(maps.Keys(f.holds))
}
