package benchmarks

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/recipes/election"
	"github.com/zksim/zksim/recipes/lock"
	"github.com/zksim/zksim/sim"
	"github.com/zksim/zksim/zkmem"
)

// Cost model of the herd benchmark. A ZooKeeper server applies requests one
// after another; a read costs it a fraction of a millisecond and a write a
// millisecond more (the fsync of its transaction log).
const (
	// ReadCost is the service time of every request.
	ReadCost = 100 * time.Microsecond
	// WriteCost is added to the service time of every create, delete,
	// setData and multi.
	WriteCost = time.Millisecond
)

// HerdCost is the simulator's cost model for the herd benchmark: every
// request takes ReadCost, one request at a time. Writes take WriteCost more,
// added by the policy [herdPolicy] builds.
var HerdCost = sim.CostModel{PerRequest: ReadCost, Workers: 1}

// CostModelDescription says in one sentence what the cost model charges.
func CostModelDescription() string {
	return fmt.Sprintf("the server serves one request at a time; every request takes %v, "+
		"a write (create, delete, setData, multi) %v more; replies and notifications "+
		"reach clients with no network delay; reply size is not charged",
		ReadCost, WriteCost)
}

func herdPolicy() sim.Policy {
	return faults.Slow(WriteCost).If(faults.OnOp(zkmem.OpCreate, zkmem.OpDelete, zkmem.OpSetData, zkmem.OpMulti))
}

// Variant is one recipe variant the herd benchmark measures.
type Variant struct {
	Name   string // short name, used in tables and benchmark names
	Recipe string // "election" or "lock"
	About  string // what its waiters watch
	// Change says how the benchmark makes the leader (holder) change.
	Change string
	expire bool // the change is an expiry of the leader's session (else a release)
	// herd: waiters watch every candidate, so candidates must not see each
	// other arrive during setup (see MeasureHerd).
	herd bool
	run  func(ctx context.Context, conn zksim.Conn, h *holders, i int)
}

// herdDir is the directory the candidates use.
const herdDir = "/herd"

// Variants are the recipe variants, in the order of the table.
var Variants = []Variant{
	{
		Name: "election-predecessor", Recipe: "election", About: "each candidate watches the one before it (election.New)",
		Change: "the leader's session expires", expire: true,
		run: func(ctx context.Context, conn zksim.Conn, h *holders, i int) {
			campaign(ctx, election.New(conn, herdDir), h, i)
		},
	},
	{
		Name: "election-herd", Recipe: "election", About: "every candidate watches all candidates (election.NewHerd)",
		Change: "the leader's session expires", expire: true, herd: true,
		run: func(ctx context.Context, conn zksim.Conn, h *holders, i int) {
			campaign(ctx, election.NewHerd(conn, herdDir), h, i)
		},
	},
	{
		Name: "election-single-node", Recipe: "election", About: "every candidate watches one leader node and races to create it (election.NewSingleNode)",
		Change: "the leader's session expires", expire: true,
		run: func(ctx context.Context, conn zksim.Conn, h *holders, i int) {
			campaign(ctx, election.NewSingleNode(conn, herdDir+"/leader"), h, i)
		},
	},
	{
		Name: "lock-predecessor", Recipe: "lock", About: "each waiter watches the one before it (lock.New)",
		Change: "the holder unlocks",
		run: func(ctx context.Context, conn zksim.Conn, h *holders, i int) {
			hold(ctx, lock.New(conn, herdDir), h, i)
		},
	},
	{
		Name: "lock-herd", Recipe: "lock", About: "every waiter watches all waiters (benchmark-only lock without predecessor watch)",
		Change: "the holder unlocks", herd: true,
		run: func(ctx context.Context, conn zksim.Conn, h *holders, i int) {
			hold(ctx, &herdLock{conn: conn, dir: herdDir}, h, i)
		},
	},
}

// VariantByName returns the variant called name.
func VariantByName(name string) (Variant, bool) {
	for _, v := range Variants {
		if v.Name == name {
			return v, true
		}
	}
	return Variant{}, false
}

type campaigner interface {
	Campaign(ctx context.Context, value []byte) error
	Done() <-chan struct{}
}

// campaign runs one candidate: it campaigns, reports when it leads, and
// returns when its leadership ends (its session was expired) or the World
// closes.
func campaign(ctx context.Context, e campaigner, h *holders, i int) {
	if err := e.Campaign(ctx, []byte(fmt.Sprintf("candidate-%d", i))); err != nil {
		h.failed(ctx, i, err)
		return
	}
	h.acquired(i)
	select {
	case <-e.Done():
	case <-ctx.Done():
	}
}

type locker interface {
	Lock(ctx context.Context) error
	Unlock(ctx context.Context) error
}

// hold runs one contender: it locks, reports when it holds, and unlocks
// when told to (or returns when the World closes).
func hold(ctx context.Context, l locker, h *holders, i int) {
	if err := l.Lock(ctx); err != nil {
		h.failed(ctx, i, err)
		return
	}
	h.acquired(i)
	select {
	case <-h.release[i]:
		if err := l.Unlock(ctx); err != nil {
			h.failed(ctx, i, err)
		}
	case <-ctx.Done():
	}
}

// holders records who led (or held the lock) when, in virtual time. Its
// indexes are the candidates' (MeasureHerd knows which client each uses).
type holders struct {
	release []chan struct{} // closed to make lock holder i unlock

	mu   sync.Mutex
	who  []int
	when []time.Time
	errs []error
}

func newHolders(n int) *holders {
	h := &holders{release: make([]chan struct{}, n)}
	for i := range h.release {
		h.release[i] = make(chan struct{})
	}
	return h
}

func (h *holders) acquired(i int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.who = append(h.who, i)
	h.when = append(h.when, time.Now())
}

func (h *holders) failed(ctx context.Context, i int, err error) {
	if ctx.Err() != nil || errors.Is(err, zksim.ErrClosing) {
		return // the World closed under us
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.errs = append(h.errs, fmt.Errorf("client %d: %w", i, err))
}

// last returns how many acquisitions there were, the last one's client and
// time, and the first error.
func (h *holders) last() (count, who int, when time.Time, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.errs) > 0 {
		err = h.errs[0]
	}
	if len(h.who) == 0 {
		return 0, -1, time.Time{}, err
	}
	return len(h.who), h.who[len(h.who)-1], h.when[len(h.when)-1], err
}

// Change is what one leader change cost.
type Change struct {
	Counts
	Failover time.Duration // from the change to the next leader knowing it leads
	Steps    int           // scheduler steps until every client was quiet again
}

// HerdResult is one measured run: a variant with N candidates.
type HerdResult struct {
	Variant string
	N       int
	Setup   Counts // everything until the first leader, with all N waiting
	Changes []Change
}

// Mean returns the mean cost of a change.
func (r HerdResult) Mean() (notifications, reads, replyBytes, writes float64, failover time.Duration) {
	if len(r.Changes) == 0 {
		return 0, 0, 0, 0, 0
	}
	var f time.Duration
	for _, c := range r.Changes {
		notifications += float64(c.Notifications)
		reads += float64(c.Reads)
		replyBytes += float64(c.ReplyBytes)
		writes += float64(c.Writes)
		f += c.Failover
	}
	k := float64(len(r.Changes))
	return notifications / k, reads / k, replyBytes / k, writes / k, f / time.Duration(len(r.Changes))
}

// idle is how long the World must be quiet (in virtual time) for a run to
// count as settled.
const idle = time.Minute

// MeasureHerd runs variant v with n candidates in a simulated World (in a
// testing/synctest bubble, under t, scheduled from seed) and makes the
// leader change `changes` times (at most n-1). It fails t if the recipe
// misbehaves: an error, or anything but exactly one new leader after a
// change.
//
// Setting up is not measured, but it costs O(n²) (every candidate lists
// the directory once), so it is arranged to be as cheap as it can be. All
// candidates start; their creates are held back, then let through one at a
// time in the order of their paths, the k-th from client k. Sequence
// numbers then follow the order of names (for the recipes' protected names,
// the order of their random GUIDs), so a listing comes from the server
// already in sequence order and costs O(n), not O(n log n), to sort; and
// since client k always holds the k-th node, the run does not depend on
// the GUIDs drawn (crypto/rand is not seeded, so runs may overlap). The
// candidates of the predecessor and single-node variants each join the line
// (list the directory, set their watch) before the next create goes.
// Those of the variants whose waiters watch every candidate get no reply
// until all the nodes are created (otherwise each arrival would wake all
// earlier candidates: O(n²) notifications, O(n³) names listed).
func MeasureHerd(t *testing.T, v Variant, n, changes int, seed uint64) HerdResult {
	t.Helper()
	changes = min(changes, n-1)
	res := HerdResult{Variant: v.Name, N: n}
	cfg := sim.Config{
		Seed: seed, Clients: n, Cost: HerdCost, Policy: herdPolicy(),
		SessionTimeout: 10 * time.Second, IdleTimeout: idle, NoTrace: true,
	}
	synctest.Test(t, func(t *testing.T) {
		w, err := sim.New(cfg)
		if err != nil {
			t.Fatalf("sim.New: %v", err)
		}
		defer func() {
			w.Close()
			// Let virtual time run, so that client goroutines asleep on a
			// timer see the World closed and return before the bubble ends.
			time.Sleep(idle)
		}()
		if err := makeDir(w.Server()); err != nil {
			t.Fatal(err)
		}
		var c counters
		h := newHolders(n)
		// Every candidate starts, on a connection to be chosen: its first
		// create waits at the gate.
		gate := &createGate{}
		for i := range n {
			conn := &countingConn{c: &c, gate: gate, slot: i}
			w.Go(func(ctx context.Context) { v.run(ctx, conn, h, i) })
		}
		held := gate.held()
		if len(held) != n {
			t.Fatalf("%s n=%d: %d creates at the gate, want one per candidate", v.Name, n, len(held))
		}
		serve := 2 * (ReadCost + WriteCost) // time enough to serve one create
		if v.herd {
			// Hold back every delivery until all the nodes are created.
			for i := range n {
				if err := w.Faults().Delay(i, time.Duration(n)*serve+time.Second); err != nil {
					t.Fatal(err)
				}
			}
		}
		// The creates reach the server one at a time in the order of their
		// paths, the k-th from client k.
		clientOf := make([]int, n) // by candidate
		for k, gc := range held {
			clientOf[gc.cc.slot] = k
			gc.let(w.Conn(k))
			if v.herd {
				if err := w.RunFor(serve); err != nil {
					t.Fatal(err)
				}
			} else {
				settle(t, w) // the candidate joins the line before the next one comes
			}
		}
		settle(t, w)
		count, leader, _, err := h.last()
		if err != nil || count != 1 {
			t.Fatalf("%s n=%d: after setup: %d leaders, error %v", v.Name, n, count, err)
		}
		res.Setup = c.snapshot()
		for k := range changes {
			before, steps := c.snapshot(), w.Steps()
			start := time.Now()
			if v.expire {
				if err := w.Faults().Expire(clientOf[leader]); err != nil {
					t.Fatal(err)
				}
			} else {
				close(h.release[leader])
			}
			settle(t, w)
			var when time.Time
			count, leader, when, err = h.last()
			if err != nil || count != k+2 {
				t.Fatalf("%s n=%d: after change %d: %d leaders in all (want %d), error %v", v.Name, n, k+1, count, k+2, err)
			}
			res.Changes = append(res.Changes, Change{
				Counts:   c.snapshot().Sub(before),
				Failover: when.Sub(start),
				Steps:    w.Steps() - steps,
			})
		}
	})
	return res
}

// settle runs the World until nothing happens any more.
func settle(t *testing.T, w *sim.World) {
	t.Helper()
	if err := w.Run(nil); !errors.Is(err, sim.ErrIdle) {
		t.Fatalf("running the world: %v (want it to go idle)", err)
	}
}

// makeDir creates the candidates' directory, straight on the server.
func makeDir(srv *zkmem.Server) error {
	conn, err := srv.Connect()
	if err != nil {
		return err
	}
	defer conn.Close()
	_, err = conn.Create(context.Background(), herdDir, nil, zksim.ModePersistent, zksim.OpenACL())
	return err
}
