package history_test

import (
	"context"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zksim/zksim"
	"github.com/zksim/zksim/sim"
	"github.com/zksim/zksim/zkmem"
)

// shadow keeps every state the workload's nodes went through, by zxid, so
// that a follower can serve a read from any point of the past.
type shadow struct {
	mu      sync.Mutex
	srv     *zkmem.Server
	side    *zkmem.Conn // reads the tree beside the simulated clients
	root    string
	entries map[string][]entry
}

type entry struct {
	zxid   int64
	exists bool
	data   []byte
	stat   zksim.Stat
}

func newShadow(t *testing.T, w *sim.World, root string) *shadow {
	t.Helper()
	side, err := w.Server().Connect(zkmem.WithSessionTimeout(time.Hour))
	require.NoError(t, err)
	return &shadow{srv: w.Server(), side: side, root: root, entries: map[string][]entry{}}
}

// applied records the state of the node a write touched, after it.
func (s *shadow) applied(r *zkmem.Request) {
	if r.Op != zkmem.OpCreate && r.Op != zkmem.OpSetData && r.Op != zkmem.OpDelete || !strings.HasPrefix(r.Path, s.root+"/") {
		return
	}
	data, st, err := s.side.Get(context.Background(), r.Path)
	e := entry{zxid: s.srv.LastZxid(), exists: err == nil, data: data}
	if st != nil {
		e.stat = *st
	}
	s.mu.Lock()
	s.entries[r.Path] = append(s.entries[r.Path], e)
	s.mu.Unlock()
}

// at returns the state of p at zxid z.
func (s *shadow) at(p string, z int64) entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	es := s.entries[p]
	i, _ := slices.BinarySearchFunc(es, z+1, func(e entry, z int64) int { return int(e.zxid - z) })
	if i == 0 {
		return entry{}
	}
	return es[i-1]
}

// follower serves a client's Get and Exists as a lagging follower would:
// from the state at a read point drawn between the highest zxid the client
// has seen and the server's last zxid, which only goes up. With broken
// set, every fifth read is served from before the client's floor instead
// (a member serving a client an older state than it saw).
type follower struct {
	zksim.Conn
	sh     *shadow
	rng    *rand.Rand
	mu     sync.Mutex
	floor  int64
	broken bool
	reads  int
	stale  *atomic.Int64 // reads served a state older than the latest
}

func (f *follower) raise() {
	z := f.sh.srv.LastZxid()
	f.mu.Lock()
	f.floor = max(f.floor, z)
	f.mu.Unlock()
}

// point draws the read point of a read.
func (f *follower) point() int64 {
	last := f.sh.srv.LastZxid()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	if f.broken && f.reads%5 == 0 && f.floor > 0 {
		return f.rng.Int64N(f.floor)
	}
	z := f.floor + f.rng.Int64N(last-f.floor+1)
	f.floor = z
	return z
}

// read returns the state of p at the read's point.
func (f *follower) read(p string) entry {
	z := f.point()
	e := f.sh.at(p, z)
	if e.zxid != f.sh.at(p, f.sh.srv.LastZxid()).zxid {
		f.stale.Add(1)
	}
	return e
}

func (f *follower) Get(ctx context.Context, p string) ([]byte, *zksim.Stat, error) {
	e := f.read(p)
	if !e.exists {
		return nil, nil, zksim.ErrNoNode
	}
	st := e.stat
	return slices.Clone(e.data), &st, nil
}

func (f *follower) Exists(ctx context.Context, p string) (bool, *zksim.Stat, error) {
	e := f.read(p)
	if !e.exists {
		return false, nil, nil
	}
	st := e.stat
	return true, &st, nil
}

func (f *follower) Children(ctx context.Context, p string) ([]string, *zksim.Stat, error) {
	names, st, err := f.Conn.Children(ctx, p)
	f.raise()
	return names, st, err
}

func (f *follower) Create(ctx context.Context, p string, data []byte, mode zksim.CreateMode, acl []zksim.ACL) (string, error) {
	name, err := f.Conn.Create(ctx, p, data, mode, acl)
	f.raise()
	return name, err
}

func (f *follower) Set(ctx context.Context, p string, data []byte, version int32) (*zksim.Stat, error) {
	st, err := f.Conn.Set(ctx, p, data, version)
	f.raise()
	return st, err
}

func (f *follower) Delete(ctx context.Context, p string, version int32) error {
	err := f.Conn.Delete(ctx, p, version)
	f.raise()
	return err
}

func (f *follower) Sync(ctx context.Context, p string) (string, error) {
	name, err := f.Conn.Sync(ctx, p)
	f.raise()
	return name, err
}

// followerRun runs the workload with every client behind a follower.
func followerRun(t *testing.T, seed uint64, fault float64, broken bool, stale *atomic.Int64) error {
	t.Helper()
	return followerRunOpts(t, simOpts{seed: seed, clients: 4, fault: fault, paths: 3, ops: 15}, broken, stale)
}

func followerRunOpts(t *testing.T, o simOpts, broken bool, stale *atomic.Int64) error {
	t.Helper()
	seed := o.seed
	var sh *shadow
	o.prepare, o.wrap =
		func(w *sim.World) func(r *zkmem.Request) {
			sh = newShadow(t, w, "/h")
			return sh.applied
		}, func(i int, c zksim.Conn) zksim.Conn {
			return &follower{Conn: c, sh: sh, rng: rand.New(rand.NewPCG(seed, uint64(i))), broken: broken, stale: stale}
		}
	_, err := simRunOpts(t, o)
	return err
}

// TestSimFollowerStaleReadsPass: reads served by lagging followers, stale
// but never older than what their client saw, pass the check.
func TestSimFollowerStaleReadsPass(t *testing.T) {
	var stale atomic.Int64
	n := seeds(t) / 5
	for seed := range uint64(n) {
		require.NoError(t, followerRun(t, seed, 0.005, false, &stale), "seed %d", seed)
	}
	t.Logf("%d histories, %d stale reads", n, stale.Load())
	require.Positive(t, stale.Load())
}

// TestSimFollowerBehindClientCaught: a follower that serves a client from
// before what the client saw is caught.
func TestSimFollowerBehindClientCaught(t *testing.T) {
	const n = 20
	caught := 0
	for seed := range uint64(n) {
		if followerRun(t, seed, 0, true, &atomic.Int64{}) != nil {
			caught++
		}
	}
	t.Logf("caught on %d of %d seeds", caught, n)
	require.GreaterOrEqual(t, caught, n*3/4)
}

// TestSimFollowerStress is TestSimFollowerStaleReadsPass with 8 clients on
// 2 paths, more faults and PCT scheduling. It runs only when HISTORY_SEEDS
// is set.
func TestSimFollowerStress(t *testing.T) {
	if _, ok := os.LookupEnv(seedsEnv); !ok {
		t.Skip("set " + seedsEnv + " to run")
	}
	var stale atomic.Int64
	n := seeds(t)
	for seed := range uint64(n) {
		o := simOpts{seed: seed, clients: 8, fault: 0.02, paths: 2, ops: 25, pct: seed%2 == 1}
		require.NoError(t, followerRunOpts(t, o, false, &stale), "seed %d", seed)
	}
	t.Logf("%d histories, %d stale reads", n, stale.Load())
}
