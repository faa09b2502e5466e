package explore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/lock"
	"github.com/zksim/zksim/sim"
)

// The lock recipes' whole API under the lock machine: besides Lock and
// Unlock, the machines of the real locks (a lockKind with newAPI, and a
// holder that checks its state) acquire with TryLock, TryAcquire or the
// sync.Locker adapters, release through a Locker, call Lock again while
// holding, Unlock with nothing held, take a Guard, cancel a release, build
// semaphores with bad arguments, and have a third party delete the
// recipe's nodes. The model checks each call's result against the
// recipe's documentation, and these invariants after every step:
//
//   - what an acquisition returned: nil means a new hold (a new Key, the
//     node's czxid as Token, the node's data as WithData set it; on an
//     object the process kept, a Key other than its last hold's and a
//     larger Token); an error leaves no hold (a new object: NotHeld, no Key,
//     token 0; a kept one: the state, Key and Token of its last hold); ErrLocked and ErrNoLease
//     come only from a try, and only when another node could block it at
//     some moment of the call; Lock and TryLock while holding return
//     ErrAlreadyHeld at once, and Unlock with nothing held ErrNotHeld;
//   - what a release returned: nil means the hold has ended (Lost or
//     Released) and its node is gone; a hold whose session ended counts
//     as released, so a release never returns ErrSessionExpired or
//     ErrClosing;
//   - hold states tell the truth: Held only while connected with the
//     node ours, Doubtful only while the connection is down and for at
//     most the session timeout, Lost and Released for good; Watch and
//     Done agree with State (see checkHolds).

// apiHold is a hold of a real lock recipe, with the rest of its API.
type apiHold interface {
	holdable
	Key() string
	Watch() (recipes.HoldState, <-chan struct{})
	Done() <-chan struct{}
	Guard() (zksim.Op, error)
	// tryAcquire acquires only if the hold is free now (TryLock,
	// TryRLock, TryAcquire).
	tryAcquire(ctx context.Context) error
	// refusal is what tryAcquire returns when the hold is not free.
	refusal() error
	// locker is the hold's sync.Locker, nil if the recipe has none.
	locker() sync.Locker
	// mutex is the Mutex behind the hold, nil for a semaphore lease.
	mutex() *lock.Mutex
	// blocked reports whether the tree holds a node that keeps a try
	// from succeeding: one of another session, or one that was there
	// when the try began (before).
	blocked(w *world, session int64, before map[string]bool) bool
}

// apiClient is what the API actions remember of one client.
type apiClient struct {
	trying    atomic.Bool // a try acquisition runs
	contended atomic.Bool // a node that could refuse it was seen since it began
	before    map[string]bool
	// h and last are the hold and state checkHolds last saw, doubtful
	// since when it has been Doubtful (-1 if not): machine goroutine only.
	h        apiHold
	key      string // h's Key then
	last     recipes.HoldState
	doubtful time.Duration
	// since is when the hold last became Doubtful (-1: it is not);
	// released that a release of it was called: machine goroutine only.
	since    time.Duration
	released bool
	closed   atomic.Bool // its process closed the session
	ownerCache
}

// apiMutex is a lock or one half of a read-write lock.
type apiMutex struct {
	*lock.Mutex
	rw    *lock.RWMutex // nil for an exclusive lock
	write bool
}

func (h apiMutex) Acquire(ctx context.Context) error {
	switch {
	case h.rw == nil:
		return h.Lock(ctx)
	case h.write:
		return h.rw.Lock(ctx)
	}
	return h.rw.RLock(ctx)
}

func (h apiMutex) Release(ctx context.Context) error {
	switch {
	case h.rw == nil:
		return h.Unlock(ctx)
	case h.write:
		return h.rw.Unlock(ctx)
	}
	return h.rw.RUnlock(ctx)
}

func (h apiMutex) tryAcquire(ctx context.Context) error {
	switch {
	case h.rw == nil:
		return h.TryLock(ctx)
	case h.write:
		return h.rw.TryLock(ctx)
	}
	return h.rw.TryRLock(ctx)
}

func (h apiMutex) Exclusive() bool    { return h.rw == nil || h.write }
func (h apiMutex) refusal() error     { return lock.ErrLocked }
func (h apiMutex) mutex() *lock.Mutex { return h.Mutex }
func (h apiMutex) locker() sync.Locker {
	switch {
	case h.rw == nil:
		return lock.NewLocker(h.Mutex)
	case h.write:
		return lock.NewLocker(h.rw.Writer())
	}
	return h.rw.RLocker()
}

// blocked: any node blocks a lock or a writer; a reader only a writer's.
func (h apiMutex) blocked(w *world, session int64, before map[string]bool) bool {
	for _, n := range w.children(lockDir) {
		if h.rw != nil && !h.write && !strings.Contains(n, "write-") {
			continue
		}
		if before[n] || w.owner(lockDir+"/"+n) != session {
			return true
		}
	}
	return false
}

// apiLease is a semaphore lease. The lease is set by the acquiring
// goroutine and read by the machine's checks at any time, hence atomic.
type apiLease struct {
	sem   *lock.Semaphore
	lease *atomic.Pointer[lock.Lease]
}

func (h apiLease) Acquire(ctx context.Context) error {
	l, err := h.sem.Acquire(ctx)
	if err == nil {
		h.lease.Store(l)
	}
	return err
}

func (h apiLease) tryAcquire(ctx context.Context) error {
	l, err := h.sem.TryAcquire(ctx)
	if err == nil {
		h.lease.Store(l)
	}
	return err
}

func (h apiLease) Release(ctx context.Context) error { return h.lease.Load().Release(ctx) }
func (h apiLease) Exclusive() bool                   { return false }

func (h apiLease) State() recipes.HoldState {
	if l := h.lease.Load(); l != nil {
		return l.State()
	}
	return recipes.NotHeld
}

func (h apiLease) Key() string {
	if l := h.lease.Load(); l != nil {
		return l.Key()
	}
	return ""
}

func (h apiLease) Watch() (recipes.HoldState, <-chan struct{}) {
	if l := h.lease.Load(); l != nil {
		return l.Watch()
	}
	return recipes.NotHeld, closedChan
}

func (h apiLease) Done() <-chan struct{} {
	if l := h.lease.Load(); l != nil {
		return l.Done()
	}
	return closedChan
}

func (h apiLease) Guard() (zksim.Op, error) {
	if l := h.lease.Load(); l != nil {
		return l.Guard()
	}
	return nil, lock.ErrNotHeld
}

func (h apiLease) Token() int64 {
	if l := h.lease.Load(); l != nil {
		return l.Token()
	}
	return 0
}

func (h apiLease) refusal() error      { return lock.ErrNoLease }
func (h apiLease) locker() sync.Locker { return nil }
func (h apiLease) mutex() *lock.Mutex  { return nil }

// blocked: max leases of others (or there before the try) exist.
func (h apiLease) blocked(w *world, session int64, before map[string]bool) bool {
	n := 0
	for _, name := range w.children(lockDir + "/leases") {
		if before[name] || w.owner(lockDir+"/leases/"+name) != session {
			n++
		}
	}
	return n >= semaphoreMax
}

// semaphoreMax is the semaphore machine's number of leases.
const semaphoreMax = 2

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// newAPIMutex, newAPIRWMutex and newAPILease make the holds of the real
// lock recipes for the API actions, with data as the node's data.
func newAPIMutex(_ *rapid.T, c *client, data []byte) apiHold {
	return apiMutex{Mutex: lock.New(recipeConn(c), lockDir, lock.WithData(data))}
}

func newAPIRWMutex(t *rapid.T, c *client, data []byte) apiHold {
	rw := lock.NewRWMutex(recipeConn(c), lockDir, lock.WithData(data), lock.WithACL(zksim.OpenACL()))
	if rapid.Bool().Draw(t, "write") {
		return apiMutex{Mutex: rw.Writer(), rw: rw, write: true}
	}
	return apiMutex{Mutex: rw.Reader(), rw: rw}
}

func newAPILease(_ *rapid.T, c *client, data []byte) apiHold {
	sem, err := lock.NewSemaphore(recipeConn(c), lockDir, semaphoreMax, lock.WithData(data))
	if err != nil {
		panic(err) // the arguments are constants
	}
	return apiLease{sem: sem, lease: new(atomic.Pointer[lock.Lease])}
}

// apiActions are the actions of the real locks' machines; Acquire and
// Release replace the lock machine's own.
func (f *lockFamily) apiActions() map[string]func(*rapid.T) {
	a := map[string]func(*rapid.T){
		"Acquire":         func(t *rapid.T) { f.acquireAPI(t, drawClient(t, f.acquirers(), "acquire")) },
		"Release":         func(t *rapid.T) { f.releaseAPI(t, drawClient(t, f.holders(), "release")) },
		"LockAgain":       f.lockAgain,
		"UnlockNothing":   f.unlockNothing,
		"Guard":           f.guard,
		"CreateProtected": f.createProtected,
		"CreateRefused":   f.createProtectedRefused,
		// CancelCall cancels a release or a protected create under way.
		"CancelCall": func(t *rapid.T) {
			type call struct {
				c    *client
				name string
			}
			var calls []call
			for _, c := range f.w.awake() {
				for _, name := range []string{"release", "protected"} {
					if c.busy(name) {
						calls = append(calls, call{c, name})
					}
				}
			}
			if len(calls) == 0 {
				t.SkipNow()
			}
			x := rapid.SampledFrom(calls).Draw(t, "call")
			x.c.stop(x.name)
		},
	}
	if f.w.cfg.faults {
		a["DeleteNode"] = f.deleteNode
		a["DeleteWaiterNode"] = f.deleteWaiterNode
		a["DeleteWhileDown"] = f.deleteWhileDown
		// CloseSession: a process closes its session (its holds are Lost,
		// its calls return ErrClosing); it then gets a new one.
		a["CloseSession"] = func(t *rapid.T) { f.closeSession(drawClient(t, f.w.awake(), "close")) }
		// CloseHolderSession: the same for a holder (most processes are
		// not holding when CloseSession draws): its hold must become Lost.
		a["CloseHolderSession"] = func(t *rapid.T) { f.closeSession(drawClient(t, f.holders(), "close")) }
	}
	if f.kind.name == semaphoreKind.name {
		a["NewSemaphore"] = f.newSemaphore
	}
	return a
}

// closeSession closes c's session: its holds are Lost, its calls return
// ErrClosing; it then gets a new one.
func (f *lockFamily) closeSession(c *client) {
	conn := c.conn
	f.cs[c.idx].api.closed.Store(true)
	c.start("close", func(context.Context) error { return conn.Close() })
}

// acquireAPI starts an acquisition by c with Lock (Acquire), a try, or a
// sync.Locker, and checks what it returns.
func (f *lockFamily) acquireAPI(t *rapid.T, c *client) {
	lc := f.cs[c.idx]
	// The process's own object (kept), or a new one with new data.
	var (
		h      apiHold
		data   []byte
		before *lastHold
	)
	k, ok := f.kept(c).(apiHold)
	if lost := lc.holding.Load(); ok && (lost || rapid.Bool().Draw(t, "same object")) {
		// (A process whose hold was Lost locks again with the same
		// object, without a release: lostHolders.)
		lc.unreleased.Store(lc.unreleased.Load() || lost)
		lc.holding.Store(false)
		h, data = k, lc.data
		before = &lastHold{st: k.State(), key: k.Key(), token: k.Token()}
	} else {
		data = fmt.Appendf(nil, "p%d@%d", c.idx, f.w.sw.Steps())
		h = f.kind.newAPI(t, c, data)
	}
	lc.data = data
	vias := []string{"Lock", "Try"}
	if h.locker() != nil {
		vias = append(vias, "Locker")
	}
	via := rapid.SampledFrom(vias).Draw(t, "via")
	conn := c.conn
	lc.h, lc.conn = h, conn
	lc.cancelled.Store(0)
	if via == "Try" {
		lc.api.before = map[string]bool{}
		for _, dir := range f.kind.dirs {
			for _, n := range f.w.children(dir) {
				lc.api.before[n] = true
			}
		}
		lc.api.contended.Store(h.blocked(f.w, conn.SessionID(), lc.api.before))
		lc.api.trying.Store(true)
	}
	resetTimed(c)
	c.start("acquire", func(ctx context.Context) error {
		var err error
		switch via {
		case "Lock":
			err = h.Acquire(ctx)
		case "Try":
			err = h.tryAcquire(ctx)
		case "Locker":
			err = f.catch(c, "Locker.Lock", h.locker().Lock)
		}
		f.checkAcquired(c, conn, h, via, data, before, err)
		lc.api.trying.Store(false)
		if err == nil {
			lc.unreleased.Store(false)
			f.acquired(c, conn, h)
			lc.holding.Store(true)
			_ = f.write(ctx, c, conn, h)
		}
		return err
	})
}

// catch calls a sync.Locker method and turns its panic into the error it
// carries: the Locker's documented way to fail.
func (f *lockFamily) catch(c *client, what string, call func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(error)
			if !ok {
				f.w.violate(kindLocker, "p%d %s panicked with %v, not an error", c.idx, what, r)
				e = fmt.Errorf("%v", r)
			}
			err = e
		}
	}()
	call()
	return nil
}

// lastHold is what an object the process kept said of its last hold
// before it acquired again.
type lastHold struct {
	st    recipes.HoldState
	key   string
	token int64
}

// checkAcquired checks what an acquisition of a new hold returned; before
// is what h said of its last hold, nil for a new object.
func (f *lockFamily) checkAcquired(c *client, conn *sim.Conn, h apiHold, via string, data []byte, before *lastHold, err error) {
	w := f.w
	lc := f.cs[c.idx]
	switch {
	case errors.Is(err, h.refusal()):
		if via != "Try" {
			w.violate(kindAcquireResult, "p%d's %s returned %v: only a try may", c.idx, via, err)
		} else if !lc.api.contended.Load() {
			w.violate(kindAcquireResult, "p%d's try returned %v though nothing could block it during the call", c.idx, err)
		}
	case errors.Is(err, lock.ErrAlreadyHeld):
		w.violate(kindAcquireResult, "p%d's %s of a new lock returned %v", c.idx, via, err)
	}
	if err != nil && !errors.Is(err, h.refusal()) && !errors.Is(err, context.Canceled) &&
		!errors.Is(err, zksim.ErrSessionExpired) && !errors.Is(err, zksim.ErrClosing) && !errors.Is(err, zksim.ErrAuthFailed) {
		// The package doc's list: ctx.Err(), an expired session, a closed
		// Conn, a failed authentication (recipes' doc; ErrAlreadyHeld is
		// checked above).
		w.violate(kindAcquireResult, "p%d's %s returned %v: not ctx.Err(), ErrSessionExpired, ErrClosing or ErrAuthFailed", c.idx, via, err)
	}
	// And the error names what happened.
	switch {
	case errors.Is(err, zksim.ErrClosing) && conn.State() != zksim.StateClosed && w.ctx.Err() == nil:
		w.violate(kindAcquireResult, "p%d's %s returned %v, its Conn %v", c.idx, via, err, conn.State())
	case errors.Is(err, zksim.ErrSessionExpired) && conn.State() != zksim.StateExpired && conn.State() != zksim.StateClosed && w.ctx.Err() == nil:
		w.violate(kindAcquireResult, "p%d's %s returned %v, its Conn %v", c.idx, via, err, conn.State())
	case errors.Is(err, zksim.ErrAuthFailed) && !f.w.sw.AuthFailed(conn.Index()):
		w.violate(kindAcquireResult, "p%d's %s returned %v, its Conn %v", c.idx, via, err, conn.State())
	}
	st, key, token := h.State(), h.Key(), h.Token()
	if err != nil {
		// A new object has no hold; a kept one still tells of its last
		// hold, which had ended ("the current or last hold", the
		// recipes' Key and Token).
		want := lastHold{st: recipes.NotHeld}
		if before != nil {
			want = *before
		}
		if st != want.st || key != want.key || token != want.token {
			w.violate(kindAcquireResult, "p%d's %s returned %v but left a hold: %v, key %q, token %#x (before the call: %v, key %q, token %#x)", c.idx, via, err, st, key, token, want.st, want.key, want.token)
		}
		return
	}
	if before != nil && (key == before.key || token <= before.token) {
		w.violate(kindAcquireResult, "p%d's %s returned nil but its hold is the last one's: key %q, token %#x", c.idx, via, key, token)
		return
	}
	if st == recipes.NotHeld || key == "" || token <= 0 {
		w.violate(kindAcquireResult, "p%d's %s returned nil without a hold: %v, key %q, token %#x", c.idx, via, st, key, token)
		return
	}
	got, stat, gerr := w.observer.Get(w.ctx, key)
	if gerr != nil || stat.EphemeralOwner != conn.SessionID() {
		return // already gone: the hold is (or will be) Lost
	}
	if stat.Czxid != token || string(got) != string(data) {
		w.violate(kindAcquireResult, "p%d's hold %s: token %#x, data %q; its node: czxid %#x, data %q", c.idx, key, token, data, stat.Czxid, got)
	}
}

// releaseAPI releases c's hold with Release or its sync.Locker, and
// checks what it returns.
func (f *lockFamily) releaseAPI(t *rapid.T, c *client) {
	lc := f.cs[c.idx]
	h, ok := lc.h.(apiHold)
	if !ok {
		f.release(c)
		return
	}
	via := "Release"
	if h.locker() != nil && rapid.Bool().Draw(t, "via locker") {
		via = "Locker"
	}
	conn := lc.conn
	lc.api.released = true
	// again: once released, it unlocks the same Mutex again at once,
	// which holds nothing: ErrNotHeld, without a request (see
	// unlockNothing).
	again := h.mutex() != nil && rapid.Bool().Draw(t, "unlock again")
	resetTimed(c)
	c.start("release", func(ctx context.Context) error {
		var err error
		if via == "Locker" {
			err = f.catch(c, "Locker.Unlock", h.locker().Unlock)
		} else {
			err = h.Release(ctx)
		}
		if errors.Is(err, zksim.ErrSessionExpired) || errors.Is(err, zksim.ErrClosing) {
			// The hold ended with its session: its node is gone (or going),
			// which counts as released.
			f.w.violate(kindEndedHoldNotReleased, "p%d's %s returned %v: a hold whose session ended counts as released", c.idx, via, err)
		}
		if err == nil {
			f.checkReleased(c, conn, h, via)
			if again {
				// A done ctx: it must not need the server.
				dctx, cancel := context.WithCancel(ctx)
				cancel()
				if err := h.mutex().Unlock(dctx); !errors.Is(err, lock.ErrNotHeld) {
					f.w.violate(kindAPIResult, "p%d's second Unlock after its %s returned %v, want ErrNotHeld", c.idx, via, err)
				}
			}
			lc.holding.Store(false)
			if f.w.isLive() {
				lc.liveDone.Store(true)
			}
		}
		return err
	})
}

// checkReleased: a release that returned nil ended the hold and left no
// node of the session behind.
func (f *lockFamily) checkReleased(c *client, conn *sim.Conn, h apiHold, via string) {
	w := f.w
	if st := h.State(); !st.Final() {
		w.violate(kindReleaseResult, "p%d's %s returned nil, the hold still %v", c.idx, via, st)
	}
	if _, err := h.Guard(); !errors.Is(err, lock.ErrNotHeld) {
		w.violate(kindReleaseResult, "p%d's Guard after its %s returned %v, want ErrNotHeld", c.idx, via, err)
	}
	if w.owner(h.Key()) == conn.SessionID() && slices.Contains(w.sw.Server().SessionIDs(), conn.SessionID()) && conn.State() != zksim.StateClosed {
		w.violate(kindReleaseResult, "p%d's %s returned nil, its node %s still there", c.idx, via, h.Key())
	}
}

// lockAgain: a holder calls Lock, TryLock or its Locker's Lock again on
// the same Mutex: ErrAlreadyHeld (the Locker panics with it), at once.
func (f *lockFamily) lockAgain(t *rapid.T) {
	var cs []*client
	for _, c := range f.holders() {
		if h, ok := f.cs[c.idx].h.(apiHold); ok && h.mutex() != nil && !h.State().Final() && !c.busy("acquire") && !c.busy("relock") {
			cs = append(cs, c)
		}
	}
	c := drawClient(t, cs, "lock again")
	h := f.cs[c.idx].h.(apiHold)
	via := rapid.SampledFrom([]string{"Lock", "Try", "Locker"}).Draw(t, "via")
	f.sync(t, c, "relock", func(ctx context.Context) error {
		switch via {
		case "Lock":
			return h.Acquire(ctx)
		case "Try":
			return h.tryAcquire(ctx)
		}
		return f.catch(c, "Locker.Lock", h.locker().Lock)
	}, lock.ErrAlreadyHeld)
}

// unlockNothing: a client that holds nothing calls Unlock (or its Locker's
// Unlock) on its last Mutex or on a new one: ErrNotHeld at once, and Guard
// says ErrNotHeld too. A new Mutex also says it never held.
func (f *lockFamily) unlockNothing(t *rapid.T) {
	var cs []*client
	for _, c := range f.idle() {
		if h, ok := f.cs[c.idx].h.(apiHold); !ok || h.mutex() != nil {
			cs = append(cs, c)
		}
	}
	c := drawClient(t, cs, "unlock nothing")
	h, ok := f.cs[c.idx].h.(apiHold)
	// (A Mutex whose Lock after a Lost hold failed may still have the
	// Lost hold's node to delete, best effort: its Unlock may send a
	// delete and return nil, as after a Lost hold. It is left out.)
	if !ok || f.cs[c.idx].unreleased.Load() || rapid.Bool().Draw(t, "new") {
		h = f.kind.newAPI(t, c, nil)
		if h.mutex() == nil {
			t.SkipNow()
		}
		st, ch := h.Watch()
		if st != recipes.NotHeld || h.State() != recipes.NotHeld || h.Key() != "" || h.Token() != 0 || !isClosed(ch) || !isClosed(h.Done()) {
			f.w.violate(kindNewLock, "p%d's new lock: state %v (%v), key %q, token %#x, watch closed %v, done closed %v",
				c.idx, st, h.State(), h.Key(), h.Token(), isClosed(ch), isClosed(h.Done()))
		}
	}
	if _, err := h.Guard(); !errors.Is(err, lock.ErrNotHeld) {
		f.w.violate(kindUnlockNothing, "p%d holds nothing, Guard returned %v, want ErrNotHeld", c.idx, err)
	}
	locker := rapid.Bool().Draw(t, "via locker")
	f.sync(t, c, "unlock", func(ctx context.Context) error {
		if locker {
			return f.catch(c, "Locker.Unlock", h.locker().Unlock)
		}
		return h.mutex().Unlock(ctx)
	}, lock.ErrNotHeld)
}

// sync runs call for c as an operation named name that must return want
// without waiting for the server: once every goroutine is blocked, it must
// have returned.
func (f *lockFamily) sync(t *rapid.T, c *client, name string, call func(ctx context.Context) error, want error) {
	var got atomic.Value
	if !c.start(name, func(ctx context.Context) error {
		err := call(ctx)
		got.Store(fmt.Sprint(err))
		if !errors.Is(err, want) {
			f.w.violate(kindAPIResult, "p%d's %s returned %v, want %v", c.idx, name, err, want)
		}
		return err
	}) {
		t.SkipNow()
	}
	synctest.Wait()
	if got.Load() == nil {
		f.w.violate(kindAPIResult, "p%d's %s waits for the server, want %v at once", c.idx, name, want)
	}
}

// guard: the Guard of a hold that has not ended is a check of its node,
// any version; of one that has ended, ErrNotHeld.
func (f *lockFamily) guard(t *rapid.T) {
	var cs []*client
	for _, c := range f.w.awake() {
		if _, ok := f.cs[c.idx].h.(apiHold); ok && f.cs[c.idx].holding.Load() {
			cs = append(cs, c)
		}
	}
	c := drawClient(t, cs, "guard")
	h := f.cs[c.idx].h.(apiHold)
	st := h.State()
	op, err := h.Guard()
	want := &zksim.CheckOp{Path: h.Key(), Version: -1}
	switch {
	case st.Final() && !errors.Is(err, lock.ErrNotHeld):
		f.w.violate(kindGuard, "p%d's hold is %v, Guard returned %v, %v; want ErrNotHeld", c.idx, st, op, err)
	case !st.Final() && (err != nil || fmt.Sprint(op) != fmt.Sprint(want)):
		f.w.violate(kindGuard, "p%d's hold is %v, Guard returned %v, %v; want %v", c.idx, st, op, err, want)
	}
}

// newSemaphore: NewSemaphore refuses a max below 1 and a bad directory
// with an error matching zksim.ErrBadArguments, and takes the others.
func (f *lockFamily) newSemaphore(t *rapid.T) {
	max := rapid.IntRange(-1, 3).Draw(t, "max")
	dir := rapid.SampledFrom([]string{lockDir, "/other/sem", "lock", "/lock/", ""}).Draw(t, "dir")
	s, err := lock.NewSemaphore(f.w.clients[0].conn, dir, max)
	bad := max < 1 || zksim.ValidatePath(dir, false) != nil
	switch {
	case bad && (s != nil || !errors.Is(err, zksim.ErrBadArguments)):
		f.w.violate(kindNewSemaphore, "NewSemaphore(%q, %d) returned %v, %v; want ErrBadArguments", dir, max, s, err)
	case !bad && (s == nil || err != nil):
		f.w.violate(kindNewSemaphore, "NewSemaphore(%q, %d) returned %v, %v", dir, max, s, err)
	}
}

// deleteNode: a third party deletes one of the recipe's nodes (a leaf
// under its directory).
func (f *lockFamily) deleteNode(t *rapid.T) {
	leaves := f.w.sw.Faults().Leaves(lockDir)
	if len(leaves) == 0 {
		t.SkipNow()
	}
	p := rapid.SampledFrom(leaves).Draw(t, "node")
	f.w.inject(t, faults.DeleteNode(p))
}

// deleteWaiterNode: a third party deletes the contender node of a process
// whose acquisition is under way, most often one that waits (the rare
// case of DeleteNode's uniform draw): the recipe must notice that its node
// vanished and start over (a new node), not wait on, hold without a node,
// or fail.
func (f *lockFamily) deleteWaiterNode(t *rapid.T) {
	var nodes []string
	for _, c := range f.w.awake() {
		if !c.busy("acquire") {
			continue
		}
		for _, dir := range f.kind.dirs {
			for _, n := range f.w.ownedUnder(dir, c.conn.SessionID()) {
				nodes = append(nodes, dir+"/"+n)
			}
		}
	}
	if len(nodes) == 0 {
		t.SkipNow()
	}
	f.w.inject(t, faults.DeleteNode(rapid.SampledFrom(nodes).Draw(t, "node")))
}

// deleteWhileDown: a holder's connection goes down, a third party deletes
// its node meanwhile, and the connection comes back: the hold, Doubtful
// while down, is Lost once it has checked its node (checkHolds: not
// Doubtful while connected with nothing in flight).
func (f *lockFamily) deleteWhileDown(t *rapid.T) {
	var cs []*client
	for _, c := range f.holders() {
		lc := f.cs[c.idx]
		if h, ok := lc.h.(apiHold); ok && h.State() == recipes.Held && lc.conn == c.conn && !c.partitioned && f.w.owner(h.Key()) == c.conn.SessionID() {
			cs = append(cs, c)
		}
	}
	c := drawClient(t, cs, "delete while down")
	key := f.cs[c.idx].h.(apiHold).Key()
	f.w.inject(t, faults.Disconnect(c.conn.Index(), 200*time.Millisecond))
	f.w.inject(t, faults.DeleteNode(key))
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// doubtfulSlack is how long past the session timeout a hold may stay
// Doubtful: the lost timer runs from when the client heard of the
// disconnection.
const doubtfulSlack = 50 * time.Millisecond

// checkHolds checks, after every step, that the hold states of the API
// holds tell the truth (see the top of the file), and notes the nodes that
// could refuse a try under way.
func (f *lockFamily) checkHolds(owners map[int64]*client) {
	w := f.w
	if f.kind.newAPI != nil && f.checkState {
		f.checkProtected(owners)
	}
	for _, c := range w.clients {
		lc := f.cs[c.idx]
		h, ok := lc.h.(apiHold)
		if !ok {
			continue
		}
		if lc.api.trying.Load() && !lc.api.contended.Load() && h.blocked(w, lc.conn.SessionID(), lc.api.before) {
			lc.api.contended.Store(true)
		}
		st := h.State()
		// (A kept object's next hold, with a key of its own, is a new
		// hold.)
		if key := h.Key(); lc.api.h == h && lc.api.key == key {
			if lc.api.last.Final() && st != lc.api.last || lc.api.last != recipes.NotHeld && st == recipes.NotHeld {
				w.violate(kindHoldState, "p%d's hold went from %v to %v", c.idx, lc.api.last, st)
			}
		} else {
			lc.api.h, lc.api.key, lc.api.last, lc.api.doubtful, lc.api.since, lc.api.released = h, key, recipes.NotHeld, -1, -1, false
		}
		f.checkEnd(c, lc, h, st, owners)
		switch {
		case st != recipes.Doubtful:
			lc.api.since = -1
		case lc.api.since < 0:
			lc.api.since = w.sw.Now()
		}
		lc.api.last = st
		ws, ch := h.Watch()
		open := st == recipes.Held || st == recipes.Doubtful
		if ws != st || isClosed(ch) == open || isClosed(h.Done()) == open {
			w.violate(kindHoldState, "p%d's hold is %v; Watch says %v, its channel closed %v, Done closed %v", c.idx, st, ws, isClosed(ch), isClosed(h.Done()))
		}
		connected := lc.conn.State() == zksim.StateConnected
		i := lc.conn.Index()
		switch {
		case st != recipes.Doubtful || connected || w.sw.Paused(i) || w.sw.InFlight(i):
			// The lost timer runs while disconnected only, from when the
			// holder heard of it: a request of its own in flight may
			// hold it up.
			lc.api.doubtful = -1
		case lc.api.doubtful < 0:
			lc.api.doubtful = w.sw.Now()
		}
		if w.sw.Paused(i) {
			continue
		}
		if d := w.sw.Now() - lc.api.doubtful; lc.api.doubtful >= 0 && d > lc.conn.SessionTimeout()+doubtfulSlack {
			w.violate(kindHoldState, "p%d's hold has been Doubtful and disconnected for %v, past the session timeout", c.idx, d)
		}
		if w.sw.InFlight(i) {
			continue // it has not heard all the server has to say
		}
		switch {
		case st == recipes.Held && !(connected && f.owned(lc, h, owners)):
			w.violate(kindHoldState, "p%d's hold says Held; connection %v, node %s ours %v", c.idx, lc.conn.State(), h.Key(), f.owned(lc, h, owners))
		case st == recipes.Doubtful && connected:
			w.violate(kindHoldState, "p%d's hold says Doubtful though connected, with nothing in flight", c.idx)
		}
	}
}

// checkEnd: a hold ends for a reason. Released only once its holder
// called a release; Lost only when its node is gone (deleted, or gone
// with the session), its Conn expired or closed, or it stayed Doubtful
// for the session timeout (the package doc's list).
func (f *lockFamily) checkEnd(c *client, lc *lockClient, h apiHold, st recipes.HoldState, owners map[int64]*client) {
	w := f.w
	if st == lc.api.last {
		return
	}
	switch st {
	case recipes.Released:
		if !lc.api.released && !c.busy("release") {
			w.violate(kindHoldState, "p%d's hold became Released, though no release was called", c.idx)
		}
	case recipes.Lost:
		cs := lc.conn.State()
		timedOut := lc.api.last == recipes.Doubtful && lc.api.since >= 0 && w.sw.Now()-lc.api.since >= lc.conn.SessionTimeout()
		if f.owned(lc, h, owners) && cs != zksim.StateExpired && cs != zksim.StateClosed && !w.sw.AuthFailed(lc.conn.Index()) && !lc.api.closed.Load() && !timedOut {
			w.violate(kindHoldState, "p%d's hold became Lost (from %v) with its node there, its Conn %v", c.idx, lc.api.last, cs)
		}
	}
}

// owned reports whether the node of lc's hold h exists, owned by its
// session, which is live.
func (f *lockFamily) owned(lc *lockClient, h apiHold, owners map[int64]*client) bool {
	if _, live := owners[lc.conn.SessionID()]; !live {
		return false
	}
	// The owner of a node changes only with the tree, and every change of
	// the tree is a new zxid: look again only then.
	key, zxid := h.Key(), f.w.sw.Server().LastZxid()
	if c := &lc.api.ownerCache; c.key != key || c.zxid != zxid {
		*c = ownerCache{key, zxid, f.w.owner(key)}
	}
	return lc.api.ownerCache.owner == lc.conn.SessionID()
}

// ownerCache is the owner of a hold's node at a zxid.
type ownerCache struct {
	key   string
	zxid  int64
	owner int64
}

// nodeGone reports whether the node of lc's hold is gone (or another
// session's): a third party deleted it. A holder that has not heard of it
// yet may still say Held.
func (f *lockFamily) nodeGone(lc *lockClient) bool {
	h, ok := lc.h.(apiHold)
	return ok && f.w.owner(h.Key()) != lc.conn.SessionID()
}
