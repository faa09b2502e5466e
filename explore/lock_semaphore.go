package explore

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"pgregory.net/rapid"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/lock"
)

// The semaphore machine's layouts and foreign nodes. Each check draws the
// semaphore's layout (lock.WithLayout: Zksim, Curator or Kazoo) and its
// number of leases (1 to 3, for 4 processes), and a third party may plant
// in its directory the nodes of another layout's semaphore
// (PlantForeign). What each layout does with them is what recipes/lock
// documents (Semaphore.Acquire; the package doc, "Sharing a lock with
// Curator and kazoo"), which is what Curator 5.4's
// InterProcessSemaphoreV2 and kazoo 2.8's Semaphore do:
//
//   - Zksim: the leases are the lease- nodes of <dir>/leases; it lists
//     neither <dir> nor counts the other children of leases, so a kazoo
//     lease in <dir> and an odd child of leases change nothing.
//   - Curator: InterProcessSemaphoreV2 counts every child of
//     <dir>/leases as a lease (internalAcquire1Lease grants while
//     children.size() <= maxLeases), so an odd child there takes a
//     permit; a kazoo lease in <dir>, which Curator never lists, is
//     refused: Acquire returns an error matching recipes.ErrForeignNodes.
//   - Kazoo: kazoo's Semaphore counts every child of <dir> as a lease
//     (_get_lease creates its lease while len(children) < max_leases), so
//     another kazoo client's lease takes a permit; Curator's (and the
//     Zksim layout's) locks and leases directories in <dir> are refused,
//     at each listing.
//
// And in every layout the internal lock, a Mutex of the same layout,
// refuses the nodes of a layout it cannot order (Mutex.Lock; a kazoo
// Lock's node in <dir>/locks, a Curator lock's in <dir>-__lock__), so
// Acquire returns ErrForeignNodes then too.
//
// The invariants (semaphoreAPI.check, semaphoreAPI.returned): an
// acquisition returns ErrForeignNodes only if a node its layout refuses
// was in the directory at some moment of the call (on an ensemble, at
// some moment before it returned: a member behind may still show one
// deleted before the call began); on a standalone server, one during
// which such a node was there throughout gets no lease (ErrForeignNodes,
// or the end of its context or session); and the holders of leases,
// with the planted nodes the layout counts that were there since before
// each of them began to acquire, are at most max. The liveness phase
// begins with the third party deleting what it planted.

// kazooUntouched: no third party deletes the Kazoo layout's internal lock
// nodes (<dir>-__lock__ is not under <dir>, where DeleteNode draws, and
// DeleteWaiterNode leaves it alone). There, as in kazoo's own Semaphore,
// an acquirer whose lock node is deleted while the create of its lease
// is on its way (a connection loss, retried) creates it after the next
// acquirer, which took the lock, created its own: max+1 leases, found by
// this machine (TestLockSemaphoreEnsemble, seed 22, "too many holders":
// Acquire, Advance, DeleteNode). A create guarded by the lock node (a
// Multi with its check) would close it; not done yet. The Zksim and
// Curator layouts count the leases after their create, so the same
// deletion cannot make them exceed max (and the acquirer that lost its
// lock gives its place back: Semaphore.acquire).

// semaphoreConfig is the semaphore of one check: its layout and number of
// leases.
type semaphoreConfig struct {
	layout lock.Layout
	max    int
}

// leaseDir is the directory whose children are the leases.
func (s semaphoreConfig) leaseDir() string {
	if s.layout == lock.Kazoo {
		return lockDir
	}
	return lockDir + "/leases"
}

// internalDir is the directory of the internal lock's nodes.
func (s semaphoreConfig) internalDir() string {
	if s.layout == lock.Kazoo {
		return lockDir + "-__lock__"
	}
	return lockDir + "/locks"
}

// counts reports whether the layout counts name, a child of leaseDir, as
// a lease: the Zksim layout counts its lease- nodes (the machine plants
// none other with "lease-" in its name), Curator and kazoo every child.
func (s semaphoreConfig) counts(name string) bool {
	return s.layout != lock.Zksim || strings.Contains(name, leaseMarker)
}

// leaseMarker marks the lease nodes of the Zksim and Curator layouts.
const leaseMarker = "lease-"

func (s semaphoreConfig) semaphore(conn zksim.Conn, data []byte) *lock.Semaphore {
	sem, err := lock.NewSemaphore(conn, lockDir, s.max, lock.WithData(data), lock.WithLayout(s.layout))
	if err != nil {
		panic(err) // the arguments are valid
	}
	return sem
}

// newSemaphoreFamily draws the semaphore of a check and returns its lock
// family. In the Curator and Kazoo layouts the sequence numbers start at
// 0, whatever the harness drew (near wrap): those layouts order the
// internal lock's nodes as Curator and kazoo do, by their text, so across
// the int32 wrap two acquirers hold it at once, as in those libraries
// (recipes/lock's package doc); the Zksim layout keeps the order there.
func newSemaphoreFamily(w *world, t *rapid.T) *lockFamily {
	s := semaphoreConfig{
		layout: rapid.SampledFrom([]lock.Layout{lock.Zksim, lock.Curator, lock.Kazoo}).Draw(t, "semaphore layout"),
		max:    rapid.IntRange(1, 3).Draw(t, "semaphore max"),
	}
	if s.layout != lock.Zksim {
		w.sw.Server().SetSequenceStart(nil)
	}
	f := newLockFamily(w, semaphoreKindOf(s), true, true)
	if w.cfg.faults && rapid.IntRange(0, 3).Draw(t, "foreign at start") == 1 {
		// The directory already holds a foreign node as the check
		// begins: a failure it causes shrinks to the acquisitions alone.
		f.api.(*semaphoreAPI).plant(t)
	}
	return f
}

// semaphoreKindOf is the lock machine's kind of the semaphore s.
func semaphoreKindOf(s semaphoreConfig) lockKind {
	return lockKind{
		name:      semaphoreName,
		dirs:      []string{s.leaseDir(), s.internalDir()},
		maxShared: s.max,
		newHold: func(_ *rapid.T, c *client) holdable {
			return &leaseHold{sem: s.semaphore(recipeConn(c), nil)}
		},
		newAPI: func(_ *rapid.T, c *client, data []byte) apiHold {
			return apiLease{sem: s.semaphore(recipeConn(c), data), lease: new(atomic.Pointer[lock.Lease]), cfg: s}
		},
		api: func(f *lockFamily) familyAPI {
			return &semaphoreAPI{f: f, cfg: s, starts: map[*lockClient]foreignMark{}}
		},
	}
}

// semaphoreName is the semaphore kind's name.
const semaphoreName = "semaphore"

// foreignEffect is what a layout does with a foreign node.
type foreignEffect int

const (
	foreignIgnored foreignEffect = iota // not listed, or not counted
	foreignCounted                      // counted as a lease
	foreignRefused                      // ErrForeignNodes
)

// foreignNode is a node of another layout's semaphore that the third party
// may plant, and what the check's layout does with it.
type foreignNode struct {
	path   string
	what   string
	effect foreignEffect
}

func (n foreignNode) String() string { return n.path + " (" + n.what + ")" }

// foreignKazooLease is the name of a kazoo client's lease (uuid4().hex)
// that the third party plants: no ten digits at its end, so that the
// simulator lists it by name, before the directories "leases" and
// "locks".
const foreignKazooLease = "6f1b2c3d2a4b4c5d8e9f0123456789ab"

// foreignNodes are the nodes the third party may plant in the layout's
// directory.
func (s semaphoreConfig) foreignNodes() []foreignNode {
	kazooLease := lockDir + "/" + foreignKazooLease
	odd := lockDir + "/leases/odd"
	// A kazoo Lock's node in the internal lock's directory, which the
	// Zksim and Curator layouts' Mutex refuses; a Curator InterProcessMutex's
	// in kazoo's, which the Kazoo layout's refuses (seqnode.Layout.Foreign).
	kazooLock := lockDir + "/locks/" + foreignKazooLease + "__lock__0000000001"
	curatorLock := lockDir + "-__lock__/_c_6f1b2c3d-2a4b-4c5d-8e9f-0123456789ab-lock-0000000001"
	switch s.layout {
	case lock.Curator:
		return []foreignNode{
			{kazooLease, "a kazoo semaphore's lease: refused", foreignRefused},
			{odd, "not a lease node: Curator counts it", foreignCounted},
			{kazooLock, "a kazoo Lock's node: the internal lock refuses it", foreignRefused},
		}
	case lock.Kazoo:
		return []foreignNode{
			{lockDir + "/locks", "a Curator semaphore's lock directory: refused", foreignRefused},
			{lockDir + "/leases", "a Curator semaphore's lease directory: refused", foreignRefused},
			{kazooLease, "another kazoo client's lease: counted", foreignCounted},
			{curatorLock, "a Curator lock's node: the internal lock refuses it", foreignRefused},
		}
	}
	return []foreignNode{
		{kazooLease, "a kazoo semaphore's lease: not listed", foreignIgnored},
		{odd, "not a lease node: not counted", foreignIgnored},
		{kazooLock, "a kazoo Lock's node: the internal lock refuses it", foreignRefused},
	}
}

// planted is a foreign node the third party created, with its czxid: a
// node at its path with another czxid was created again since.
type planted struct {
	foreignNode
	czxid int64
}

// foreignMark is what an acquisition saw of the foreign nodes as it
// began: the planted nodes there, and how many refused ones had been
// planted.
type foreignMark struct {
	present []planted
	plants  int64
}

// semaphoreAPI is the semaphore machine's part beyond the lock family's:
// its foreign nodes and their invariants.
type semaphoreAPI struct {
	f   *lockFamily
	cfg semaphoreConfig
	// planted are the nodes the third party planted, in order (machine
	// goroutine only).
	planted []planted
	// refusedPlants counts the refused nodes planted so far.
	refusedPlants atomic.Int64
	// starts is the mark of each process's last acquisition through the
	// API (machine goroutine only).
	starts map[*lockClient]foreignMark
	// cleared: the liveness phase deleted the planted nodes.
	cleared bool
}

func (s *semaphoreAPI) actions() map[string]func(*rapid.T) {
	if !s.f.w.cfg.faults {
		return nil
	}
	return map[string]func(*rapid.T){
		"PlantForeign":      s.plant,
		"CancelLeaseCall":   s.cancelLeaseCall,
		"ExpireLeaseWaiter": s.expireWaiter,
	}
}

// cancelLeaseCall cancels an acquisition that has a request on its way
// while it holds (or waits for) the internal lock and has no lease node
// yet: most often its lease's create, which the uniform Cancel seldom
// meets (the acquisitions spend their time waiting).
func (s *semaphoreAPI) cancelLeaseCall(t *rapid.T) {
	f, w := s.f, s.f.w
	var cs []*client
	for _, c := range w.awake() {
		id := c.conn.SessionID()
		if c.busy("acquire") && f.cs[c.idx].cancelled.Load() == 0 && w.inFlight(c) &&
			len(w.ownedUnder(s.cfg.internalDir(), id)) > 0 && len(w.ownedUnder(s.cfg.leaseDir(), id)) == 0 {
			cs = append(cs, c)
		}
	}
	c := drawClient(t, cs, "cancel lease call")
	f.cs[c.idx].cancelled.Store(time.Now().UnixNano())
	c.stop("acquire")
}

// expireWaiter expires the session of an acquisition that waits (nothing
// on its way) with a node of its own in the semaphore's directories: for
// a lease (its watch of the leases ends with the session's error), or
// for the internal lock.
func (s *semaphoreAPI) expireWaiter(t *rapid.T) {
	w := s.f.w
	var cs []*client
	for _, c := range w.awake() {
		id := c.conn.SessionID()
		if c.busy("acquire") && !w.inFlight(c) && c.conn.State() == zksim.StateConnected &&
			(len(w.ownedUnder(s.cfg.leaseDir(), id)) > 0 || len(w.ownedUnder(s.cfg.internalDir(), id)) > 0) {
			cs = append(cs, c)
		}
	}
	c := drawClient(t, cs, "expire lease waiter")
	w.inject(t, faults.Expire(c.conn.Index()))
}

func (s *semaphoreAPI) deleted(holdable) bool { return false }

// plant: a third party creates a node of another layout's semaphore in
// the semaphore's directory (persistent, as operators and tests leave
// them), creating its parents as that library would.
func (s *semaphoreAPI) plant(t *rapid.T) {
	w := s.f.w
	n := rapid.SampledFrom(s.cfg.foreignNodes()).Draw(t, "foreign")
	var data []byte
	if s.cfg.layout == lock.Kazoo {
		data = []byte(strconv.Itoa(s.cfg.max)) // kazoo's Semaphore writes max there
	}
	for _, dir := range []string{lockDir, path.Dir(n.path)} {
		if _, err := w.observer.Create(w.ctx, dir, data, zksim.ModePersistent, zksim.OpenACL()); err != nil && !errors.Is(err, zksim.ErrNodeExists) {
			t.Fatalf("plant %s: %v", dir, err)
		}
		data = nil
	}
	if _, err := w.observer.Create(w.ctx, n.path, nil, zksim.ModePersistent, zksim.OpenACL()); errors.Is(err, zksim.ErrNodeExists) {
		t.SkipNow()
	} else if err != nil {
		t.Fatalf("plant %s: %v", n.path, err)
	}
	ok, st, err := w.observer.Exists(w.ctx, n.path)
	if err != nil || !ok {
		t.Fatalf("planted %s: %v, %v", n.path, ok, err)
	}
	s.planted = append(s.planted, planted{n, st.Czxid})
	if n.effect == foreignRefused {
		s.refusedPlants.Add(1)
	}
	w.trace("a third party creates %v", n)
}

// present reports whether the node p planted is there still.
func (s *semaphoreAPI) present(p planted) bool {
	w := s.f.w
	ok, st, err := w.observer.Exists(w.ctx, p.path)
	return err == nil && ok && st.Czxid == p.czxid
}

// begin marks the start of lc's acquisition (machine goroutine).
func (s *semaphoreAPI) begin(lc *lockClient) foreignMark {
	m := foreignMark{plants: s.refusedPlants.Load()}
	for _, p := range s.planted {
		if s.present(p) {
			m.present = append(m.present, p)
		}
	}
	s.starts[lc] = m
	return m
}

// returned checks what an acquisition that began with mark m returned, as
// it returns (the process's goroutine): ErrForeignNodes only if a node the
// layout refuses was there during the call; on a standalone server, no
// lease if one was there throughout.
func (s *semaphoreAPI) returned(c *client, via string, m foreignMark, err error) {
	w := s.f.w
	seen := s.refusedPlants.Load() != m.plants
	var throughout []string
	for _, p := range m.present {
		if p.effect != foreignRefused {
			continue
		}
		seen = true
		if s.present(p) {
			throughout = append(throughout, p.path)
		}
	}
	ensemble := w.cfg.members >= 2
	if ensemble {
		// A member behind may show a node deleted before the call began.
		seen = s.refusedPlants.Load() > 0
	}
	foreign := errors.Is(err, recipes.ErrForeignNodes)
	switch {
	case foreign && !seen:
		w.violate(kindForeignNodes, "p%d's %s returned %v, but no node the %v layout refuses was in %s during the call", c.idx, via, err, s.cfg.layout, lockDir)
	case len(throughout) > 0 && !ensemble && !foreign && !errors.Is(err, context.Canceled) &&
		!errors.Is(err, zksim.ErrSessionExpired) && !errors.Is(err, zksim.ErrClosing) && !errors.Is(err, zksim.ErrAuthFailed):
		w.violate(kindForeignNodes, "p%d's %s returned %v, want ErrForeignNodes: %s, which the %v layout refuses, was there throughout the call",
			c.idx, via, err, strings.Join(throughout, ", "), s.cfg.layout)
	}
}

// check: the holders, with the planted nodes the layout counts as leases
// that were there since before each holder began to acquire, are at
// most max. (Each holder saw those nodes when it listed the leases; the
// last one to do so saw the others' leases too.)
func (s *semaphoreAPI) check() {
	var counted []planted
	for _, p := range s.planted {
		if p.effect == foreignCounted && s.present(p) {
			counted = append(counted, p)
		}
	}
	if len(counted) == 0 {
		return
	}
	f, w := s.f, s.f.w
	for _, st := range f.stale {
		if st.h.State() == recipes.Held && !st.c.paused() && !w.inFlightAt(st.conn.Index()) {
			return // a holder of an ended session: its acquisition's mark is gone
		}
	}
	owners := w.owners()
	var holders []string
	for _, c := range w.clients {
		lc := f.cs[c.idx]
		if !f.holdsNow(c, owners) {
			continue
		}
		m, ok := s.starts[lc]
		if !ok {
			return // acquired in the liveness phase, with nothing planted
		}
		holders = append(holders, fmt.Sprintf("p%d", c.idx))
		counted = keepMarked(counted, m)
	}
	if len(holders) > 0 && len(holders)+len(counted) > s.cfg.max {
		var names []string
		for _, p := range counted {
			names = append(names, p.path)
		}
		w.violate(kindTooManyHolders, "processes %s hold leases of the semaphore (max %d) beside %s, which the %v layout counts as leases, there since before each of them began to acquire",
			strings.Join(holders, ", "), s.cfg.max, strings.Join(names, ", "), s.cfg.layout)
	}
}

// keepMarked keeps the nodes of ps that were there when m was marked.
func keepMarked(ps []planted, m foreignMark) []planted {
	var out []planted
	for _, p := range ps {
		for _, q := range m.present {
			if q.path == p.path && q.czxid == p.czxid {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// live: once faults stop, the third party deletes what it planted (a
// refused node would refuse every acquisition, counted ones could take
// every permit).
func (s *semaphoreAPI) live() bool {
	if !s.cleared {
		s.cleared = true
		w := s.f.w
		for _, p := range s.planted {
			if s.present(p) {
				// (A leaf: no recipe creates a node under a planted
				// one. Were it not deleted, the liveness check would
				// say so.)
				_ = w.observer.Delete(w.ctx, p.path, -1)
			}
		}
		if len(s.planted) > 0 {
			w.trace("the third party deletes the nodes it planted")
		}
	}
	return true
}
