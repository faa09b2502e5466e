package explore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/sim"

	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/lock"
)

// The lock machine, which is also the election machine (leading is
// holding): clients acquire and release a hold (an exclusive lock, either
// half of a read-write lock, a semaphore lease, a leadership), holders of
// an exclusive hold write to a fenced resource with their token, and
// faults strike.
//
// Invariants, after every step:
//   - exclusion: at most one holder whose session is live (a read-write
//     lock: one writer and no reader, or readers only; a semaphore: at most
//     max leases); a holder whose session ended still counts while it runs
//     and hears from the server: it must have learnt (Doubtful, Lost) that
//     its hold is gone before another holds (the election's "a leader
//     learns it lost leadership before another leader acts");
//   - tokens (terms) grow: each exclusive hold's token is larger than every
//     token granted before;
//   - fencing: the resource never accepts a token older than one it has
//     seen;
//   - no orphan: every contender node belongs to a client that is
//     acquiring or holding, never to an idle client with a live session;
//   - shared holders are shared (a read-write lock): a reader whose node
//     has only readers' nodes ahead of it holds, once it has heard all the
//     server has to say; it may not wait behind readers (see checkShared);
//   - expiry awareness: a holder whose session ended stays under the
//     exclusion check, even after its process got a new session, until it
//     learns its hold is gone (see renew).
//
// The real locks' machines (a kind with newAPI) also call the rest of the
// locks' API, have a third party delete their nodes and processes close
// their sessions, and check what each call returns and that hold states
// tell the truth (lock_api.go, protected_api.go).
//
// Liveness: once faults stop, every client acquires (and releases) within
// liveBound of virtual time.

// holdable is one acquisition of a hold: what every lock-like recipe (and
// the flawed locks of flawed_lock.go) offers the machine.
type holdable interface {
	Acquire(ctx context.Context) error
	Release(ctx context.Context) error
	State() recipes.HoldState
	Token() int64
	// Exclusive reports whether the hold excludes every other holder (a
	// lock, a write lock), which lets its holder write to the resource.
	Exclusive() bool
}

// lockKind makes the holdables of one recipe.
type lockKind struct {
	name string
	// dirs are the directories whose children are contender nodes.
	dirs []string
	// newHold makes a new acquisition for c (draws allowed).
	newHold func(t *rapid.T, c *client) holdable
	// maxShared is how many non-exclusive holds may be held at once (0:
	// they exclude exclusive ones only, as readers do).
	maxShared int
	// readMarker and writeMarker, for a read-write lock, name its
	// contender nodes ("read-", "write-"): shared holders must be shared
	// (see checkShared).
	readMarker, writeMarker string
	// api, if set, makes the family's actions and checks beyond the
	// holdable (election_api.go).
	api func(f *lockFamily) familyAPI
	// newAPI, for a real lock recipe, makes a new hold whose node carries
	// data, for the API actions of lock_api.go; nil: no API actions.
	newAPI func(t *rapid.T, c *client, data []byte) apiHold
}

// familyAPI is a part of a lock family with actions, invariants and a
// liveness goal of its own.
type familyAPI interface {
	actions() map[string]func(*rapid.T)
	check()
	live() bool
	// deleted reports whether a third party deleted the node of hold h
	// (election_api.go's DeleteNode): its holder may believe it holds
	// until it hears of it, and its grant may come after a later one's.
	deleted(h holdable) bool
}

type lockClient struct {
	cancelled atomic.Int64 // when its acquisition was cancelled (virtual UnixNano), 0 if not
	h         holdable     // the current acquisition, nil when idle
	conn      *sim.Conn    // the session the acquisition runs on
	holding   atomic.Bool  // Acquire returned nil and Release has not returned
	liveDone  atomic.Bool  // acquired and released since the liveness phase began
	// queuedSince is when this reader was first seen waiting with only
	// readers ahead (checkShared), -1 if it is not; machine goroutine only.
	queuedSince time.Duration
	api         apiClient // what the API actions remember (lock_api.go)
	// data is the data of h's nodes (lock.WithData), for the API actions.
	data []byte
	// unreleased: h's last hold was Lost and never released, and no Lock
	// of h has succeeded since (see lostHolders).
	unreleased atomic.Bool
	// prev is the last acquisition of the process's previous session (a
	// renewing process may campaign again with it).
	prev holdable
	// again: h campaigns again with the value of a lost leadership
	// (CampaignAfterLoss), which stays "leading" for Resign until it
	// resigns: it is not an idle client's.
	again bool
}

type lockFamily struct {
	w    *world
	kind lockKind
	// checkState makes a holder check that its hold is Held before it
	// writes (the real holder); the flawed one writes regardless.
	checkState bool
	cs         []*lockClient
	lastToken  int64         // the largest exclusive token granted; guarded by w.mu
	stale      []staleHold   // holds of ended sessions not yet known lost
	api        familyAPI     // nil unless kind.api
	protected  protectedBook // the protected creates of the API actions (protected_api.go)

	// ending are the holds (Held or Doubtful) of a real lock recipe whose
	// process got a new session: once their Conn says the session ended
	// (closed, expired) they must be Lost.
	ending []staleHold
}

func newLockFamily(w *world, kind lockKind, fenced, checkState bool) *lockFamily {
	w.res = &resource{fenced: fenced}
	f := &lockFamily{w: w, kind: kind, checkState: checkState}
	for _, c := range w.clients {
		f.cs = append(f.cs, &lockClient{queuedSince: -1})
		f.time(c)
	}
	if kind.api != nil {
		f.api = kind.api(f)
	}
	return f
}

// drawRenewing draws, with faults, each client's library from t: a plain
// Conn (the process makes a new hold with a new session once its session
// ended), or a sim.Renewing (Curator's: it renews an expired session at
// once, and a call under way goes on with the new one). A hold's Campaign
// that began on one session must then not return nil on another (a call
// belongs to the session it began on, recipes/doc.go; see reportCall),
// and a hold of the expired session must become Lost (f.ending).
func (f *lockFamily) drawRenewing(t *rapid.T) *lockFamily {
	if !f.w.cfg.faults {
		return f
	}
	for _, c := range f.w.clients {
		if rapid.Bool().Draw(t, fmt.Sprintf("p%d renewing", c.idx)) {
			c.renewing = f.w.sw.Renewing(c.conn.Index())
		}
	}
	return f
}

// libConn returns the client library of c's process: its Renewing if it
// has one, else its session's Conn.
func libConn(c *client) zksim.Conn {
	if c.renewing != nil {
		return c.renewing
	}
	return c.conn
}

// time makes c's recipes, for a real lock recipe, run on a timedConn,
// which checks their retry timing (retrycheck.go). The recipes' hold
// trackers call the Conn from their own goroutine as well: the checks that
// hold then are those that stay true when two goroutines share the Conn
// (the pauses are bounded by the operation's losses, not by one loop's).
func (f *lockFamily) time(c *client) {
	if f.kind.newAPI != nil {
		c.timed = newTimedConn(f.w, c)
		c.timed.shared = true
	}
}

func (f *lockFamily) renew(c *client) {
	f.time(c)
	if !f.checkState && f.cs[c.idx].holding.Load() {
		// A holder that does not look at its hold state does not notice
		// that its session ended: it goes on believing it holds (and
		// writing), with a new session for anything else.
		return
	}
	old := f.cs[c.idx]
	if old.holding.Load() && old.h != nil && old.h.State() == recipes.Held {
		// The process got a new session while its old hold still says
		// Held: it must learn that the hold is gone (Lost) before another
		// holds. The machine keeps it under the exclusion check.
		f.stale = append(f.stale, staleHold{c: c, h: old.h, conn: old.conn})
	}
	if (f.kind.newAPI != nil || c.renewing != nil) && old.holding.Load() && old.h != nil && !old.h.State().Final() {
		f.ending = append(f.ending, staleHold{c: c, h: old.h, conn: old.conn})
	}
	lc := &lockClient{queuedSince: -1, prev: old.h}
	lc.liveDone.Store(old.liveDone.Load())
	f.cs[c.idx] = lc
}

// staleHold is a hold of a process's previous session that still said
// Held when the process got a new session.
type staleHold struct {
	c    *client
	h    holdable
	conn *sim.Conn
}

// idle returns the awake clients that neither acquire nor hold.
func (f *lockFamily) idle() []*client {
	var out []*client
	for _, c := range f.w.awake() {
		if !c.busy("acquire") && !c.busy("release") && !f.cs[c.idx].holding.Load() {
			out = append(out, c)
		}
	}
	return out
}

func (f *lockFamily) holders() []*client {
	var out []*client
	for _, c := range f.w.awake() {
		if f.cs[c.idx].holding.Load() && !c.busy("release") {
			out = append(out, c)
		}
	}
	return out
}

func (f *lockFamily) acquire(t *rapid.T, c *client) {
	h := f.kept(c)
	switch {
	case f.cs[c.idx].holding.Load():
		// Its hold was Lost: it acquires again with the same object,
		// without a release (see lostHolders).
		f.cs[c.idx].unreleased.Store(true)
		f.cs[c.idx].holding.Store(false)
	case h == nil || !rapid.Bool().Draw(t, "same object"):
		h = f.kind.newHold(t, c)
	}
	f.cs[c.idx].again = false
	f.acquireHold(c, h)
}

// acquirers are the processes that may acquire: the idle ones, and those
// whose hold was Lost (lostHolders).
func (f *lockFamily) acquirers() []*client {
	return append(f.idle(), f.lostHolders()...)
}

// lostHolders returns the awake processes whose hold on their current
// session is Lost and not released, with no call of theirs under way on
// it: each may acquire again with the same object without releasing
// first, as the recipes' docs allow (Lock after a Lost hold, Campaign
// after a Lost leadership).
func (f *lockFamily) lostHolders() []*client {
	var out []*client
	for _, c := range f.w.awake() {
		lc := f.cs[c.idx]
		if lc.h == nil || !lc.holding.Load() || lc.conn != c.conn || lc.again || lc.h.State() != recipes.Lost {
			continue
		}
		if slices.ContainsFunc([]string{"acquire", "release", "write", "relock", "unlock", "close", "campaign again", "resign idle", "proclaim", "resume"}, c.busy) {
			continue
		}
		out = append(out, c)
	}
	return out
}

// kept returns the recipe object c's process keeps for its lifetime: the
// one of its last acquisition on its current session, whatever that
// acquisition's outcome (granted and released, granted and Lost, failed,
// cancelled); nil if it has none. A real process keeps one Mutex or
// Election and calls it again and again (Curator's LeaderLatch, etcd's
// Election), so every acquisition draws whether it reuses the process's
// object or makes a new one: the state an object carries from one call to
// the next is explored. A process whose session ended makes new objects
// (renew). (The single node's CampaignAfterLoss campaigns again with its
// own.)
func (f *lockFamily) kept(c *client) holdable {
	lc := f.cs[c.idx]
	if lc.h == nil || lc.conn != c.conn || lc.again || (lc.holding.Load() && lc.h.State() != recipes.Lost) {
		return nil
	}
	return lc.h
}

// acquireHold starts the acquisition h by c.
func (f *lockFamily) acquireHold(c *client, h holdable) {
	lc := f.cs[c.idx]
	conn := c.conn
	lc.h, lc.conn = h, conn
	resetTimed(c)
	c.start("acquire", func(ctx context.Context) error {
		err := h.Acquire(ctx)
		if err == nil {
			lc.unreleased.Store(false)
			f.acquired(c, conn, h)
			lc.holding.Store(true)
			_ = f.write(ctx, c, conn, h) // a holder uses what it holds
		}
		return err
	})
}

// write is what a holder does with an exclusive hold: it writes to the
// resource with its token (the real holder first checks that its hold is
// Held). The write is a call to a service outside ZooKeeper, made on the
// session the hold was acquired on and scheduled like a request, so a
// pause, a delay or other clients' steps can come between the decision
// and the moment the resource takes the write.
func (f *lockFamily) write(ctx context.Context, c *client, conn *sim.Conn, h holdable) error {
	if !h.Exclusive() {
		return nil
	}
	if f.checkState && h.State() != recipes.Held {
		return errNotHeld
	}
	token := h.Token()
	return conn.External(ctx, fmt.Sprintf("write resource token %#x", token), func() error {
		f.w.write(c.idx, token)
		return nil
	})
}

// acquired checks that an exclusive hold's token (its term, for an
// election) is larger than every token granted before, when it is granted
// to a session that is live. A grant to a session the server has already
// expired is stale from the start: the client acts on a reply the server
// sent before the expiry (it was paused, or the reply was slow to come),
// which no recipe can prevent; it learns of the expiry next, and fencing
// keeps its writes out meanwhile.
func (f *lockFamily) acquired(c *client, conn *sim.Conn, h holdable) {
	if !h.Exclusive() {
		return
	}
	if !slices.Contains(f.w.sw.Server().SessionIDs(), conn.SessionID()) {
		c.note("stale grant: token %#x to an expired session", h.Token())
		return
	}
	if f.api != nil && f.api.deleted(h) {
		c.note("stale grant: token %#x, whose node a third party deleted", h.Token())
		return
	}
	if h, ok := h.(apiHold); ok && f.w.owner(h.Key()) != conn.SessionID() {
		// Likewise a grant whose node a third party deleted meanwhile.
		c.note("stale grant: token %#x, its node deleted", h.Token())
		return
	}
	f.w.mu.Lock()
	last := f.lastToken
	if h.Token() > last {
		f.lastToken = h.Token()
	}
	f.w.mu.Unlock()
	if h.Token() <= last {
		f.w.violate(kindTokenWentBack, "p%d holds with token %#x, not above the last one granted, %#x", c.idx, h.Token(), last)
	}
}

func (f *lockFamily) release(c *client) {
	lc := f.cs[c.idx]
	h := lc.h
	resetTimed(c)
	c.start("release", func(ctx context.Context) error {
		err := h.Release(ctx)
		if err == nil {
			f.unlockAgain(c, h)
			lc.holding.Store(false)
			if f.w.isLive() {
				lc.liveDone.Store(true)
			}
		}
		return err
	})
}

// unlockAgain: a Mutex just released holds nothing, so a second Unlock
// returns ErrNotHeld at once, without a request (so a done ctx plays no
// part): ErrNotHeld's doc (recipes/lock/options.go). Also in every
// liveness phase, which releases.
func (f *lockFamily) unlockAgain(c *client, h holdable) {
	var m *lock.Mutex
	switch h := h.(type) {
	case mutexHold:
		m = h.Mutex
	case rwHold:
		m = h.Mutex
	default:
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := m.Unlock(ctx); !errors.Is(err, lock.ErrNotHeld) {
		f.w.violate(kindAPIResult, "p%d's second Unlock after its release returned %v, want ErrNotHeld", c.idx, err)
	}
}

func (f *lockFamily) actions() map[string]func(*rapid.T) {
	m := map[string]func(*rapid.T){
		"Acquire": func(t *rapid.T) { f.acquire(t, drawClient(t, f.acquirers(), "acquire")) },
		"Release": func(t *rapid.T) { f.release(drawClient(t, f.holders(), "release")) },
		"Cancel": func(t *rapid.T) {
			var acquiring []*client
			for _, c := range f.w.awake() {
				if c.busy("acquire") && f.cs[c.idx].cancelled.Load() == 0 {
					acquiring = append(acquiring, c)
				}
			}
			c := drawClient(t, acquiring, "cancel")
			f.cs[c.idx].cancelled.Store(time.Now().UnixNano())
			c.stop("acquire")
		},
		// Write: a holder of an exclusive hold writes to the resource again
		// (it also writes once as soon as it holds).
		"Write": func(t *rapid.T) {
			var writers []*client
			for _, c := range f.holders() {
				if f.cs[c.idx].h.Exclusive() && !c.busy("write") {
					writers = append(writers, c)
				}
			}
			c := drawClient(t, writers, "write")
			h, conn := f.cs[c.idx].h, f.cs[c.idx].conn
			c.start("write", func(ctx context.Context) error { return f.write(ctx, c, conn, h) })
		},
	}
	if slices.ContainsFunc(f.w.clients, func(c *client) bool { return c.renewing != nil }) {
		// ExpireMidCall expires the session of a Renewing client while
		// one of its acquisition's requests is on its way: the Renewing
		// renews it as the reply (the session's error) comes, and the
		// acquisition must not go on with the new session (a call
		// belongs to the session it began on: reportCall).
		m["ExpireMidCall"] = func(t *rapid.T) { f.w.expireMidCall(t, "acquire") }
	}
	if f.api != nil {
		maps.Copy(m, f.api.actions())
	}
	if f.kind.newAPI != nil && f.checkState {
		maps.Copy(m, f.apiActions())
	}
	return m
}

func (f *lockFamily) check() {
	// A step's delivery may have woken a hold's tracker (a session event,
	// a watch): let it take the event in before reading hold states, so
	// that what the checks see does not depend on goroutine timing (a
	// State and a Watch read on either side of a transition told of a
	// Held hold whose Watch said Lost, a failure rapid could not replay).
	synctest.Wait()
	w := f.w
	var exclusive, shared []string
	owners := w.owners()
	for _, c := range w.clients {
		lc := f.cs[c.idx]
		if lc.h == nil || !lc.holding.Load() || lc.h.State() != recipes.Held {
			continue
		}
		// A holder counts while its session lives, and also after, as
		// long as it runs and hears from the server: such a holder must
		// have learnt that its hold is gone (Doubtful, Lost) before
		// another one holds. Only a paused holder, or one whose request is
		// still on its way, may still believe it holds (fencing covers
		// those).
		// Likewise a holder whose node a third party deleted.
		if _, live := owners[c.conn.SessionID()]; (!live || f.nodeGone(lc)) && (c.paused() || w.inFlight(c)) {
			continue
		}
		if f.api != nil && f.api.deleted(lc.h) && (c.paused() || w.inFlight(c)) {
			continue
		}
		if lc.h.Exclusive() {
			exclusive = append(exclusive, fmt.Sprintf("p%d", c.idx))
		} else {
			shared = append(shared, fmt.Sprintf("p%d", c.idx))
		}
	}
	// Holds of sessions that ended before the process got a new one: the
	// old session's Conn has heard all there is (it is done), so a hold
	// still Held there is a holder that never learnt it lost.
	f.stale = slices.DeleteFunc(f.stale, func(s staleHold) bool { return s.h.State() != recipes.Held })
	for _, s := range f.stale {
		if s.c.paused() || w.sw.InFlight(s.conn.Index()) {
			continue
		}
		name := fmt.Sprintf("p%d (its session c%d ended)", s.c.idx, s.conn.Index())
		if s.h.Exclusive() {
			exclusive = append(exclusive, name)
		} else {
			shared = append(shared, name)
		}
	}
	// A hold whose client has been told that its session ended is Lost:
	// "Lost: the session expired, ... or the Conn was closed" (the package
	// doc of recipes/lock), as soon as the tracker hears of it.
	f.ending = slices.DeleteFunc(f.ending, func(s staleHold) bool { return s.h.State().Final() })
	for _, s := range f.ending {
		if cs := s.conn.State(); (cs == zksim.StateClosed || cs == zksim.StateExpired || cs == zksim.StateAuthFailed) && !s.c.paused() && !w.sw.InFlight(s.conn.Index()) {
			w.violate(kindHoldNotLost, "p%d's hold of its ended session c%d says %v, its Conn %v", s.c.idx, s.conn.Index(), s.h.State(), cs)
		}
	}
	// Likewise a hold whose client has been told that its authentication
	// failed (authfail.go), once it has heard all the server had to say (a
	// tracker whose request is on its way hears of it when that returns):
	// the client is of no use any more, its session goes at the server's
	// timeout.
	for _, c := range w.clients {
		lc := f.cs[c.idx]
		if f.checkState && lc.h != nil && lc.conn != nil && lc.holding.Load() && lc.conn.State() == zksim.StateAuthFailed && !lc.h.State().Final() && !c.paused() && !w.sw.InFlight(lc.conn.Index()) {
			w.violate(kindHoldNotLost, "p%d's hold says %v after its client c%d failed to authenticate", c.idx, lc.h.State(), lc.conn.Index())
		}
	}
	if f.kind.readMarker != "" {
		f.checkShared(owners)
	}
	f.checkHolds(owners)
	switch {
	case len(exclusive) > 1:
		w.violate(kindTwoHolders, "processes %s hold the %s at once", strings.Join(exclusive, ", "), f.kind.name)
	case len(exclusive) == 1 && len(shared) > 0:
		w.violate(kindTwoHolders, "process %s holds the %s exclusively while %s share it", exclusive[0], f.kind.name, strings.Join(shared, ", "))
	case f.kind.maxShared > 0 && len(shared) > f.kind.maxShared:
		w.violate(kindTooManyHolders, "processes %s hold %s (max %d)", strings.Join(shared, ", "), f.kind.name, f.kind.maxShared)
	}
	// No orphan: a node of a live session belongs to a client that is
	// acquiring, releasing or holding.
	for _, dir := range f.kind.dirs {
		for _, name := range w.children(dir) {
			c, ok := owners[w.owner(dir+"/"+name)]
			// (A session its process closed goes, with its nodes, once the
			// server hears of it, or expires; so does one whose client
			// failed to authenticate, at its timeout.)
			if !ok || c.busy("acquire") || c.busy("release") || c.busy("protected") || c.busy("close") ||
				f.cs[c.idx].holding.Load() || c.conn.State() == zksim.StateClosed || c.authFailed() {
				continue
			}
			w.violate(kindOrphan, "%s/%s belongs to p%d, which neither acquires nor holds (%s)", dir, name, c.idx, f.describe(c))
		}
	}
	if f.api != nil {
		f.api.check()
	}
}

// sharedWait is how long (virtual time) a reader may wait with only
// readers ahead of it, connected and with nothing in flight: longer than
// the recipes' longest retry backoff.
const sharedWait = time.Second

// checkShared: a reader whose node has only readers' nodes ahead of it (in
// sequence order) must hold once it has heard everything the server has to
// say. A reader that stays waiting there (connected, awake, live, nothing
// in flight) for sharedWait queues behind readers: each would hold in
// turn, which no exclusion check sees and the liveness bound may not.
func (f *lockFamily) checkShared(owners map[int64]*client) {
	w := f.w
	dir := f.kind.dirs[0]
	var nodes []seqNode
	for _, name := range w.children(dir) {
		if n, ok := parseSeqNode(name, f.kind.readMarker, f.kind.writeMarker); ok {
			nodes = append(nodes, n)
		}
	}
	sortSeqNodes(nodes)
	for _, c := range w.clients {
		lc := f.cs[c.idx]
		waiting := false
		if lc.h != nil && !lc.h.Exclusive() && c.busy("acquire") && !lc.holding.Load() && lc.h.State() != recipes.Held &&
			!c.paused() && !w.inFlight(c) && c.conn.State() == zksim.StateConnected && owners[c.conn.SessionID()] == c {
			for _, n := range nodes {
				if n.marker != f.kind.readMarker {
					break // a writer ahead: the reader waits, rightly
				}
				if w.owner(dir+"/"+n.name) == c.conn.SessionID() {
					waiting = true
					break
				}
			}
		}
		switch {
		case !waiting:
			lc.queuedSince = -1
		case lc.queuedSince < 0:
			lc.queuedSince = w.sw.Now()
		case w.sw.Now()-lc.queuedSince > sharedWait:
			w.violate(kindReadersQueue, "p%d waits for the %s behind readers only for %v (%s)", c.idx, f.kind.name, w.sw.Now()-lc.queuedSince, strings.Join(w.children(dir), " "))
		}
	}
}

// describe tells what the machine knows of c, for a violation message.
func (f *lockFamily) describe(c *client) string {
	lc := f.cs[c.idx]
	state := recipes.NotHeld
	if lc.h != nil {
		state = lc.h.State()
	}
	return fmt.Sprintf("session %v, paused %v, hold %v, holding %v", c.conn.State(), c.paused(), state, lc.holding.Load())
}

// live: every client acquires once and releases, one after the other.
func (f *lockFamily) live() bool {
	done := true
	for _, c := range f.w.clients {
		lc := f.cs[c.idx]
		switch {
		case c.busy("acquire") || c.busy("release"):
			done = false
		case lc.holding.Load():
			f.release(c)
			done = false
		case !lc.liveDone.Load():
			h, conn := f.kept(c), c.conn
			if h == nil {
				h = f.kind.newHold(nil, c)
			}
			lc.h, lc.conn = h, conn
			resetTimed(c)
			c.start("acquire", func(ctx context.Context) error {
				err := h.Acquire(ctx)
				if err == nil {
					f.acquired(c, conn, h)
					lc.holding.Store(true)
				}
				return err
			})
			done = false
		}
	}
	if f.api != nil && !f.api.live() {
		done = false
	}
	return done
}

func (f *lockFamily) stuck() string {
	var out []string
	for _, c := range f.w.clients {
		lc := f.cs[c.idx]
		if !lc.liveDone.Load() {
			state := "idle"
			switch {
			case c.busy("acquire"):
				state = "still acquiring"
			case c.busy("release"):
				state = "still releasing"
			case lc.holding.Load():
				state = "holding"
			}
			out = append(out, fmt.Sprintf("p%d never acquired and released (%s)", c.idx, state))
		}
	}
	return strings.Join(out, "; ") + "; children: " + strings.Join(f.w.children(f.kind.dirs[0]), " ")
}

// The real recipes as holdables.

type mutexHold struct{ *lock.Mutex }

func (h mutexHold) Acquire(ctx context.Context) error { return h.Lock(ctx) }
func (h mutexHold) Release(ctx context.Context) error { return h.Unlock(ctx) }
func (h mutexHold) Exclusive() bool                   { return true }

type rwHold struct {
	*lock.Mutex
	write bool
}

func (h rwHold) Acquire(ctx context.Context) error { return h.Lock(ctx) }
func (h rwHold) Release(ctx context.Context) error { return h.Unlock(ctx) }
func (h rwHold) Exclusive() bool                   { return h.write }

type leaseHold struct {
	sem   *lock.Semaphore
	lease *lock.Lease
}

func (h *leaseHold) Acquire(ctx context.Context) error {
	l, err := h.sem.Acquire(ctx)
	if err == nil {
		h.lease = l
	}
	return err
}
func (h *leaseHold) Release(ctx context.Context) error { return h.lease.Release(ctx) }
func (h *leaseHold) Exclusive() bool                   { return false }
func (h *leaseHold) Token() int64                      { return h.lease.Token() }
func (h *leaseHold) State() recipes.HoldState {
	if h.lease == nil {
		return recipes.NotHeld
	}
	return h.lease.State()
}

const lockDir = "/lock"

// errNotHeld is what a holder's write says when it found its hold not Held
// and did not write.
var errNotHeld = errors.New("hold not Held: no write")

var (
	mutexKind = lockKind{
		name: "lock",
		dirs: []string{lockDir},
		newHold: func(_ *rapid.T, c *client) holdable {
			return mutexHold{lock.New(recipeConn(c), lockDir)}
		},
		newAPI: newAPIMutex,
	}
	rwKind = lockKind{
		name:        "read-write lock",
		dirs:        []string{lockDir},
		readMarker:  "read-",
		writeMarker: "write-",
		newHold: func(t *rapid.T, c *client) holdable {
			write := c.idx%2 == 0 // in the liveness phase: fixed roles
			if t != nil {
				write = rapid.Bool().Draw(t, "write")
			}
			rw := lock.NewRWMutex(recipeConn(c), lockDir)
			if write {
				return rwHold{rw.Writer(), true}
			}
			return rwHold{rw.Reader(), false}
		},
		newAPI: newAPIRWMutex,
	}
	semaphoreKind = lockKind{
		name:      "semaphore",
		dirs:      []string{lockDir + "/leases", lockDir + "/locks"},
		maxShared: 2,
		newHold: func(_ *rapid.T, c *client) holdable {
			sem, err := lock.NewSemaphore(recipeConn(c), lockDir, 2)
			if err != nil {
				panic(err) // the arguments are constants
			}
			return &leaseHold{sem: sem}
		},
		newAPI: newAPILease,
	}
)
