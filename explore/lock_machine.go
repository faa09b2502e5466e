package explore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"pgregory.net/rapid"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/sim"

	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/lock"
)

// The lock machine, which also runs the elections (leading is holding,
// election_hold.go): clients acquire and release a hold (an exclusive
// lock, either half of a read-write lock, a semaphore lease, a
// leadership), holders of an exclusive hold write to a fenced resource
// with their token, and faults strike. Its invariants:
// lock_invariants.go (the election's: election_invariants.go); the real
// locks as holdables: lock_hold.go.
//
// The real locks' machines (a kind with newAPI) also call the rest of the
// locks' API, have a third party delete their nodes and processes close
// their sessions, and check what each call returns and that hold states
// tell the truth (lock_api.go, lock_api_invariants.go, protected_api.go).
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
	// (the election's DeleteNode, election_thirdparty.go): its holder may
	// believe it holds until it hears of it, and its grant may come after
	// a later one's.
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
	api         apiClient // what the API actions remember (lock_api_hold.go)
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
	relock := false
	switch {
	case f.cs[c.idx].holding.Load():
		// Its hold was Lost: it acquires again with the same object,
		// without a release (see lostHolders).
		f.cs[c.idx].unreleased.Store(true)
		f.cs[c.idx].holding.Store(false)
		relock = true
	case h == nil || !rapid.Bool().Draw(t, "same object"):
		h = f.kind.newHold(t, c)
	}
	f.cs[c.idx].again = false
	f.acquireHold(c, h, relock)
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
		if _, lease := lc.h.(apiLease); lease {
			// A semaphore's next Acquire is a new lease, which deletes
			// nothing of the last one: a process releases a Lost lease
			// (its node may remain, its session alive: a lease Lost to
			// a long disconnection on an ensemble without a leader).
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

// acquireHold starts the acquisition h by c; relock: h's last hold was
// Lost and the process holds it still (lostHolders).
func (f *lockFamily) acquireHold(c *client, h holdable, relock bool) {
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
		} else if u, ok := h.(interface{ untouched() bool }); ok && relock && u.untouched() {
			// An election resumed with a node of the process's own,
			// whose create failed before it called the Election: the
			// Lost hold is as it was, its node included (on an
			// ensemble the session may live on), still the process's
			// to release or campaign again with.
			lc.holding.Store(true)
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

// errNotHeld is what a holder's write says when it found its hold not Held
// and did not write.
var errNotHeld = errors.New("hold not Held: no write")
