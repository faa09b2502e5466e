package explore

import (
	"time"

	"pgregory.net/rapid"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
)

// The action Refuse: a directory the queue makes on first use is missing
// and the server refuses to make it, a refusal that does not go away by
// trying again. A third party takes the create permission off the parent
// of a directory a consumer's Take needs, and restores it once the call ends (or after 2 s);
// meanwhile a consumer calls Take (or, on a locking queue, TryTake with an
// item queued, whose claim needs the claims directory), or on a FIFO queue
// the producer calls Offer (its receipt needs the directory):
//
//   - FIFO queue: the queue's directory is missing (never made, or
//     deleted by the third party while empty) and the root refuses;
//   - locking queue, before its directory exists: the third party makes
//     the directory, refusing, and its items directory (so that offers
//     work), but not its claims directory.
//
// The package documents the outcome (package doc, "Connection states"):
// a call that must make a directory the server refuses to create fails
// with the server's error (zksim.ErrNoAuth). It must neither spin on the
// refusal (runFor's livelock bound) nor report an empty queue.

// refuseACL is the ACL Refuse gives the parent: every permission but
// create (admin kept, so that the third party can restore it).
var refuseACL = zksim.WorldACL(zksim.PermAll &^ zksim.PermCreate)

// refuse runs the action Refuse.
func (f *queueFamily) refuse(t *rapid.T) {
	w := f.w
	w.sw.Enabled()
	cs := f.consumers()
	if len(cs) == 0 {
		t.SkipNow()
	}
	exists := func(p string) bool {
		ok, _, _ := w.observer.Exists(w.ctx, p)
		return ok
	}
	var (
		parent  = "/"
		restore []zksim.ACL
	)
	if f.kind.locking {
		if exists(queueDir) {
			t.SkipNow() // its ACL has no admin permission: the third party cannot change it
		}
		parent, restore = queueDir, queueACL
	} else {
		if len(w.children(queueDir)) > 0 {
			t.SkipNow()
		}
		acl, _, err := w.observer.GetACL(w.ctx, parent)
		if err != nil {
			t.Fatalf("refuse: %v", err)
		}
		restore = acl
	}
	c := cs[rapid.IntRange(0, len(cs)-1).Draw(t, "consumer")]
	wait := !f.kind.locking || rapid.Bool().Draw(t, "wait")
	if f.kind.locking {
		if _, err := w.observer.Create(w.ctx, queueDir, nil, zksim.ModePersistent, zksim.OpenACL()); err != nil {
			t.Fatalf("refuse: %v", err)
		}
		if _, err := w.observer.Create(w.ctx, queueDir+"/items", nil, zksim.ModePersistent, queueACL); err != nil {
			t.Fatalf("refuse: %v", err)
		}
		if _, err := w.observer.SetACL(w.ctx, queueDir, refuseACL, -1); err != nil {
			t.Fatalf("refuse: %v", err)
		}
		w.trace("third party: creates %s, refusing create, and %s/items", queueDir, queueDir)
	} else {
		if exists(queueDir) {
			w.inject(t, faults.DeleteNode(queueDir))
		}
		if _, err := w.observer.SetACL(w.ctx, parent, refuseACL, -1); err != nil {
			t.Fatalf("refuse: set the ACL of %s: %v", parent, err)
		}
		w.trace("third party: %s refuses create", parent)
	}
	f.mu.Lock()
	f.refusing = true
	for _, o := range w.clients {
		if o.busy("") {
			f.mayRefuse[o.idx] = true // its call under way may meet the refusal
		}
	}
	f.mu.Unlock()
	slot, what := "take", map[bool]string{true: "Take", false: "TryTake"}[wait]
	if p := w.clients[0]; !f.kind.locking && !p.paused() && !p.busy("") && rapid.Bool().Draw(t, "offer") {
		// The producer's Offer meets the refusal instead: its receipt
		// needs the directory too.
		c, slot, what = p, "offer", "Offer"
		f.offer(p, 0, false)
	} else {
		if !wait && !w.clients[0].paused() && !w.clients[0].busy("") {
			f.offer(w.clients[0], 0, false)
			w.runFor(t, 50*time.Millisecond)
		}
		f.take(c, wait, "")
	}
	// The call must end while the server refuses: it fails, it does not
	// wait. The calm stretches meet no fault meanwhile (a run of lost
	// replies would keep the call in its backoff); one struck already
	// (a delay, a slow server) may hold it up for a while.
	defer w.hw.Quiet()()
	for range heldRaceRuns {
		w.runFor(t, 100*time.Millisecond)
		if !c.busy(slot) || w.violated() {
			break
		}
	}
	// Still running with nothing in flight, connected: it waits (on a
	// watch) for a change that the refusal will never let come. (A request
	// on a session its Renewing left may still be on its way: a slow
	// server answers it late.)
	if c.busy(slot) && !w.inFlightAny(c) && c.conn.State() == zksim.StateConnected && w.sessionLive(c) && !c.partitioned && !c.paused() && !w.violated() {
		w.violate(kindRefusedCallWaits, "p%d's %s waits, nothing in flight, %v after the server refused to make a directory under %s", c.idx, what, heldRaceRuns*100*time.Millisecond, parent)
	}
	f.mu.Lock()
	f.refusing = false
	f.mu.Unlock()
	if _, err := w.observer.SetACL(w.ctx, parent, restore, -1); err != nil {
		t.Fatalf("refuse: restore the ACL of %s: %v", parent, err)
	}
	w.trace("third party: %s allows create again", parent)
}

// noteCall notes that c begins a call: one begun while Refuse refuses may
// fail with zksim.ErrNoAuth, one begun after may not.
func (f *queueFamily) noteCall(c *client) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.refusing {
		f.mayRefuse[c.idx] = true
	} else {
		delete(f.mayRefuse, c.idx)
	}
}
