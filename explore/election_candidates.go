package explore

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"sync/atomic"
	"testing/synctest"

	"pgregory.net/rapid"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/election"
	"github.com/zksim/zksim/sim"
)

// The election API's actions of a candidate beyond the Campaign and Resign
// that the lock machine drives (Acquire, Release): a second Campaign,
// Resign with nothing held or cancelled, a Campaign with an ACL the server
// refuses, a SingleNode's Campaign after a lost leadership, Proclaim,
// Guard and Resume. Their results are judged by judgeResults
// (election_invariants.go), Guard's at once.

// campaignAgain: a second Campaign on the Election value that leads
// or campaigns returns ErrCampaigning.
func (a *electionAPI) campaignAgain(t *rapid.T) {
	w := a.w
	var cs []*client
	for _, c := range w.awake() {
		lc := a.f.cs[c.idx]
		if lc.h == nil || c.busy("campaign again") || c.busy("release") {
			continue
		}
		// Held, or still campaigning (NotHeld in an acquire:
		// an acquire that led may be proclaiming or writing).
		// (An acquire by Resume campaigns only once it has made
		// its node.)
		eh, ok := lc.h.(electionHold)
		resuming := ok && eh.resume
		if st := lc.h.State(); st == recipes.Held || (st == recipes.NotHeld && c.busy("acquire") && !resuming) {
			cs = append(cs, c)
		}
	}
	c := drawClient(t, cs, "campaign again")
	e := a.f.cs[c.idx].h.(electionDirect)
	startNow(c, "campaign again", func(ctx context.Context) error {
		err := e.Campaign(ctx, []byte("again"))
		a.report(apiResult{c: c, what: "second Campaign", err: err})
		return err
	})
}

// resignIdle: Resign with nothing held (never campaigned, or
// resigned already) returns ErrNotLeader.
func (a *electionAPI) resignIdle(t *rapid.T) {
	c := drawClient(t, a.f.idle(), "resign idle")
	if c.busy("resign idle") || c.busy("campaign again") {
		t.SkipNow()
	}
	var e electionDirect
	// (Not an Election whose Campaign after a Lost leadership
	// failed: its Resign may still delete the Lost node, as
	// after a Lost leadership, and return nil. A SingleNode's
	// Campaign after a Lost leadership deletes the Lost node
	// first, or fails to for good (its client failed to
	// authenticate): once it has failed, nothing is held. So on
	// one server, where no committed fail file draws from here,
	// the single node's is drawn too.)
	lc := a.f.cs[c.idx]
	after := a.single && a.w.cfg.members == 0 && lc.conn == c.conn && !c.authFailed()
	if h := lc.h; h != nil && ((!lc.again && !lc.unreleased.Load()) || after) && rapid.Bool().Draw(t, "resigned") {
		e = h.(electionDirect)
	} else {
		e = a.direct(c, c.conn, "Resign")
	}
	startNow(c, "resign idle", func(ctx context.Context) error {
		err := e.Resign(ctx)
		a.report(apiResult{c: c, what: "Resign with nothing held", err: err})
		return err
	})
}

// cancelRelease: a Resign is cancelled; it returns ctx's error
// and the holder still holds (it may resign again), or it returns
// nil having deleted the node (the orphan check).
func (a *electionAPI) cancelRelease(t *rapid.T) {
	w := a.w
	var cs []*client
	for _, c := range w.awake() {
		if c.busy("release") {
			cs = append(cs, c)
		}
	}
	c := drawClient(t, cs, "cancel release")
	c.stop("release")
}

// invalidACL: a Campaign whose ACL the server refuses (the "auth"
// scheme, and the session has no credentials) returns ErrInvalidACL:
// it gives up at the first refused create. (No create can succeed:
// the server refuses the ACL itself, KeeperException.InvalidACL.)
func (a *electionAPI) invalidACL(t *rapid.T) {
	c := drawClient(t, a.free("invalid acl"), "invalid acl")
	conn := &refusalConn{Conn: a.apiConn(t, "invalid acl")}
	acl := election.WithACL([]zksim.ACL{{Perms: zksim.PermAll, Scheme: "auth"}})
	var e electionDirect
	if a.single {
		e = election.NewSingleNode(conn, a.path, acl)
	} else {
		e = election.New(conn, electionDir, a.opts(acl)...)
	}
	startNow(c, "invalid acl", func(ctx context.Context) error {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		conn.cancel = cancel
		err := e.Campaign(ctx, []byte("v"))
		a.report(apiResult{c: c, what: "Campaign with an invalid ACL", err: err, refused: conn.refused.Load()})
		return err
	})
}

// campaignAfterLoss (the single node): a process whose leadership
// was lost (its node deleted, its session expired and renewed)
// campaigns again with the same SingleNode; a Resign during that
// campaign returns ErrNotLeader (it does not lead yet).
func (a *electionAPI) campaignAfterLoss(t *rapid.T) {
	w := a.w
	if !a.single {
		t.SkipNow()
	}
	// (Its API calls, which run on sessions of their own, may go on.)
	busyHold := func(c *client) bool {
		return slices.ContainsFunc([]string{"acquire", "release", "write", "campaign again", "resign idle"}, c.busy)
	}
	lost := func(c *client) (singleNodeHold, bool) {
		lc := a.f.cs[c.idx]
		for _, h := range []holdable{lc.h, lc.prev} {
			if sh, ok := h.(singleNodeHold); ok && sh.State() == recipes.Lost && ((h == lc.prev && c.renewing != nil) || (h == lc.h && lc.holding.Load())) {
				return sh, true
			}
		}
		return singleNodeHold{}, false
	}
	var cs []*client
	for _, c := range w.awake() {
		// (Not while the node is still ours, its hold Lost to a long
		// disconnection: the campaign would delete it first, which the
		// plain Acquire explores; this action is about a node already
		// gone.) Or a leader, whose node a third party deletes first.
		lc := a.f.cs[c.idx]
		_, leads := lc.h.(singleNodeHold)
		leads = leads && lc.holding.Load() && lc.h.State() == recipes.Held && lc.conn == c.conn && w.owner(a.path) == c.conn.SessionID()
		if _, ok := lost(c); (ok || leads) && !busyHold(c) && (leads || w.owner(a.path) != c.conn.SessionID()) {
			cs = append(cs, c)
		}
	}
	c := drawClient(t, cs, "campaign after loss")
	if _, ok := lost(c); !ok {
		if a.noteDeleted(a.path) {
			w.inject(t, faults.DeleteNode(a.path))
		}
		for i := 0; i < 50 && w.sw.Enabled() > 0 && !w.violated(); i++ {
			w.step(t)
			synctest.Wait()
		}
	}
	old, ok := lost(c)
	if !ok || busyHold(c) || w.owner(a.path) == c.conn.SessionID() {
		return
	}
	lc := a.f.cs[c.idx]
	lc.holding.Store(false) // the process drops the lost hold
	lc.prev, lc.again = nil, true
	h := singleNodeHold{SingleNode: old.SingleNode, c: c, conn: c.conn, timed: old.timed}
	a.f.acquireHold(c, h, false)
	if a.ends == nil {
		a.ends = map[*client]*holdEnd{}
	}
	a.ends[c] = &holdEnd{h: h, last: recipes.Lost, since: -1} // Lost from before, until it leads again
	synctest.Wait()
	if !c.busy("acquire") || !rapid.Bool().Draw(t, "resign") {
		return
	}
	// It does not lead: Resign says so from what it knows, sending
	// nothing (so its ctx, done here, plays no part, and the
	// machine's goroutine may call it).
	ctx, cancel := context.WithCancel(w.ctx)
	cancel()
	if err := h.Resign(ctx); !errors.Is(err, election.ErrNotLeader) {
		w.violate(kindElectionAPI, "p%d: Resign during a campaign (of a SingleNode whose leadership was lost) returned %v, not ErrNotLeader", c.idx, err)
	}
}

// proclaimIdle: Proclaim by a client that does not lead (never did,
// or resigned) returns ErrNotLeader at once. (A leader proclaims as
// part of its acquisition: electionHold.Acquire.)
func (a *electionAPI) proclaimIdle(t *rapid.T) {
	c := drawClient(t, a.f.idle(), "proclaim idle")
	e := election.New(c.conn, electionDir, a.opts()...)
	if h := a.f.cs[c.idx].h; h != nil && rapid.Bool().Draw(t, "resigned") {
		e = h.(electionHold).Election
	}
	if e.State() == recipes.Held || e.State() == recipes.Doubtful {
		t.SkipNow() // an acquire that failed after it led (a write)
	}
	startNow(c, "proclaim", func(ctx context.Context) error {
		err := e.Proclaim(ctx, []byte("idle"))
		a.report(apiResult{c: c, what: "Proclaim by a non-leader", err: err})
		return err
	})
}

// proclaimGone: a third party deletes the leader's node, then the
// leader proclaims. Proclaim "returns ErrNotLeader if we do not lead
// or our node is gone".
func (a *electionAPI) proclaimGone(t *rapid.T) {
	w := a.w
	var cs []*client
	for _, c := range w.awake() {
		lc := a.f.cs[c.idx]
		if lc.h != nil && lc.holding.Load() && lc.h.State() == recipes.Held && !c.busy("release") && !c.busy("proclaim") {
			cs = append(cs, c)
		}
	}
	c := drawClient(t, cs, "proclaim gone")
	eh := a.f.cs[c.idx].h.(electionHold)
	key := eh.Key()
	if _, st, err := w.observer.Exists(w.ctx, key); err == nil && st != nil {
		a.delMu.Lock()
		a.deletedIDs[st.Czxid], a.deletedPaths[key] = true, true
		a.delMu.Unlock()
		w.inject(t, faults.DeleteNode(key))
	}
	a.values++
	value := fmt.Sprintf("v%d", a.values)
	startNow(c, "proclaim", func(ctx context.Context) error {
		err := eh.Proclaim(ctx, []byte(value))
		a.report(apiResult{c: c, what: "Proclaim of a deleted node", err: err, key: key, value: value})
		return err
	})
}

// callGuard (the action Guard): the leader's guard is a check on its node; with nothing held,
// ErrNotLeader.
func (a *electionAPI) callGuard(t *rapid.T) {
	w := a.w
	var cs []*client
	for _, c := range w.awake() {
		if !c.busy("") || a.f.cs[c.idx].holding.Load() {
			cs = append(cs, c)
		}
	}
	c := drawClient(t, cs, "guard")
	lc := a.f.cs[c.idx]
	var e *election.Election
	if lc.h != nil {
		e = lc.h.(electionHold).Election
	} else {
		e = election.New(c.conn, electionDir, a.opts()...)
	}
	state := e.State()
	op, err := e.Guard()
	switch {
	case state == recipes.Held && lc.holding.Load():
		if check, ok := op.(*zksim.CheckOp); err != nil || !ok || check.Path != e.Key() {
			w.violate(kindGuard, "p%d leads (Held) with %s, but Guard returned %v, %v", c.idx, e.Key(), op, err)
		}
	case state == recipes.NotHeld || state == recipes.Released || state == recipes.Lost:
		if !errors.Is(err, election.ErrNotLeader) || op != nil {
			w.violate(kindGuard, "p%d does not lead (%v), but Guard returned %v, %v, not ErrNotLeader", c.idx, state, op, err)
		}
	}
}

// callResume (the action Resume): Resume with a node that is not ours
// returns ErrNotCandidate; the leader's with its own node, ErrCampaigning.
func (a *electionAPI) callResume(t *rapid.T) {
	w := a.w
	if !a.ownLayout() {
		t.SkipNow() // its keys are zksim's names (election_layout.go)
	}
	c := drawClient(t, a.free("resume"), "resume")
	// (One that is not named as a candidate, one that is but missing.)
	keys := []string{electionDir + "/" + junkNames[0], electionDir + "/_c_00000000-0000-4000-8000-000000000000-n_0000000099"}
	for _, name := range w.children(electionDir) {
		// ... and a candidate's name in another directory.
		keys = append(keys, electionDir+"/"+name, path.Dir(electionDir)+"/"+name)
	}
	key := rapid.SampledFrom(keys).Draw(t, "key")
	e := election.New(a.apiConn(t, "resume"), electionDir) // owns no node
	lc, own := a.f.cs[c.idx], false
	if lc.holding.Load() && lc.h.State() == recipes.Held && !c.busy("release") && rapid.Bool().Draw(t, "own") {
		// The leader resumes with its own node: ErrCampaigning.
		e, key, own = lc.h.(electionHold).Election, lc.h.(electionHold).Key(), true
	}
	startNow(c, "resume", func(ctx context.Context) error {
		err := e.Resume(ctx, key)
		if own {
			a.report(apiResult{c: c, what: "Resume while leading", err: err})
			return err
		}
		if err == nil {
			_ = e.Resign(ctx)
		}
		a.report(apiResult{c: c, what: "Resume of another's node", err: err})
		return err
	})
}

// refusalConn counts the creates the server refuses with ErrInvalidACL, and
// cancels the call at the second: a recipe that ignores the refusal would
// create again and again.
type refusalConn struct {
	*sim.Conn
	refused atomic.Int32
	cancel  context.CancelFunc // set before the call
}

func (r *refusalConn) Create(ctx context.Context, path string, data []byte, mode zksim.CreateMode, acl []zksim.ACL) (string, error) {
	p, err := r.Conn.Create(ctx, path, data, mode, acl)
	if errors.Is(err, zksim.ErrInvalidACL) && r.refused.Add(1) > 1 {
		r.cancel()
	}
	return p, err
}
