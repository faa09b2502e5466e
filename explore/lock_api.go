package explore

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/lock"
)

// The lock recipes' whole API under the lock machine: besides Lock and
// Unlock, the machines of the real locks (a lockKind with newAPI, and a
// holder that checks its state) acquire with TryLock, TryAcquire or the
// sync.Locker adapters, release through a Locker, call Lock again while
// holding, Unlock with nothing held, take a Guard, cancel a release, build
// semaphores with bad arguments, and have a third party delete the
// recipe's nodes. The model checks each call's result against the
// recipe's documentation, and the hold states after every step
// (lock_api_invariants.go). The holds with their API: lock_api_hold.go.

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
	if f.kind.name == semaphoreName {
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
	lc.api.downFrom, lc.api.longDown = -1, false
	lc.cancelled.Store(0)
	sem, _ := f.api.(*semaphoreAPI)
	var mark foreignMark
	if sem != nil {
		mark = sem.begin(lc)
	}
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
		if sem != nil {
			sem.returned(c, via, mark, err)
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
			if s, ok := f.api.(*semaphoreAPI); ok && dir == s.cfg.internalDir() && s.cfg.layout == lock.Kazoo {
				continue // kazooUntouched (lock_semaphore.go)
			}
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
