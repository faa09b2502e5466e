package election_test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/election"
	"github.com/zksim/zksim/zkmem"
	bt "github.com/zksim/zksim/zktest"
)

// faultCases put the elections under zkmem's faults.
var faultCases = bt.Cases{
	"FaultChaos":               testElectionChaos,
	"FaultLeaderExpires":       testLeaderExpires,
	"FaultLeaderPartitioned":   testLeaderPartitioned,
	"FaultLostCampaignReply":   testLostCampaignReply,
	"FaultSingleNodeLostReply": testSingleNodeLostReply,
	"FaultLeaderNodeDeleted":   testLeaderNodeDeleted,
	"PredecessorWakesOnlyNext": func(t *testing.T, env *bt.Env) { testWakeups(t, env, election.New, false) },
	"HerdWakesEveryone":        func(t *testing.T, env *bt.Env) { testWakeups(t, env, election.NewHerd, true) },
}

// testLeaderExpires: the leader's session expires; it is told Lost and the
// next candidate leads with a larger token.
func testLeaderExpires(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("election")
	aConn := env.MemConn(t)
	a, b := election.New(aConn, dir), election.New(env.Conn(t), dir)
	must(t, "a.Campaign", a.Campaign(ctx, nil))
	bDone := bt.GoErr(func() error { return b.Campaign(ctx, nil) })
	bt.WaitChildren(t, ctx, env.Conn(t), dir, 2)
	aConn.Server().Control(aConn.SessionID()).Expire()
	must(t, "b.Campaign", bt.Recv(t, ctx, bDone).Err)
	<-a.Done()
	if a.State() != recipes.Lost {
		t.Fatalf("a state %v, want Lost", a.State())
	}
	if b.Token() <= a.Token() {
		t.Fatalf("new leader's token %d not above %d", b.Token(), a.Token())
	}
	if err := a.Campaign(ctx, nil); !errors.Is(err, zksim.ErrSessionExpired) {
		t.Fatalf("Campaign on an expired session: %v", err)
	}
	must(t, "b.Resign", b.Resign(ctx))
}

// testLeaderPartitioned: the leader's connection stays down. It is
// Doubtful at once; the next candidate leads only once the session has
// expired, and by then the old leader no longer believes it leads.
func testLeaderPartitioned(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("election")
	aConn := env.MemConn(t)
	a, b := election.New(aConn, dir), election.New(env.Conn(t), dir)
	must(t, "a.Campaign", a.Campaign(ctx, nil))
	bDone := bt.GoErr(func() error { return b.Campaign(ctx, nil) })
	bt.WaitChildren(t, ctx, env.Conn(t), dir, 2)
	_, changed := a.Watch()
	aConn.Server().Control(aConn.SessionID()).Disconnect()
	<-changed
	if a.State() != recipes.Doubtful {
		t.Fatalf("a state after disconnect %v, want Doubtful", a.State())
	}
	env.Settle()
	bt.Pending(t, bDone, "b.Campaign while a's session lives")
	must(t, "b.Campaign", bt.Recv(t, ctx, bDone).Err)
	if a.State() == recipes.Held {
		t.Fatal("two leaders: b leads while a believes it does")
	}
	<-a.Done()
	must(t, "b.Resign", b.Resign(ctx))
}

// testLostCampaignReply: each create of a first campaign loses its reply
// in turn; the candidate leads with one node, and resigning leaves none.
func testLostCampaignReply(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	observer := env.Conn(t)
	for n := 1; n <= 3; n++ {
		dir := env.Path("election") + string(rune('0'+n))
		conn := env.MemConn(t)
		conn.Server().Control(conn.SessionID()).SetFaultHook(bt.NthRequest(zkmem.OpCreate, n, zkmem.LoseReply))
		e := election.New(conn, dir)
		must(t, "Campaign", e.Campaign(ctx, nil))
		if children := bt.Children(t, ctx, observer, dir); len(children) != 1 {
			t.Fatalf("create %d lost: children %v, want one", n, children)
		}
		must(t, "Resign", e.Resign(ctx))
		if children := bt.Children(t, ctx, observer, dir); len(children) != 0 {
			t.Fatalf("create %d lost: orphans %v", n, children)
		}
	}
}

// testSingleNodeLostReply: the single-node candidate's create reply is
// lost; it recognises the node as its own by its EphemeralOwner.
func testSingleNodeLostReply(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	p := env.Path("leader")
	conn := env.MemConn(t)
	conn.Server().Control(conn.SessionID()).LoseNextReply(zkmem.OpCreate)
	s := election.NewSingleNode(conn, p)
	must(t, "Campaign", s.Campaign(ctx, []byte("me")))
	l, err := s.Leader(ctx)
	must(t, "Leader", err)
	if l.Session != conn.SessionID() || s.State() != recipes.Held {
		t.Fatalf("leader %+v state %v, want ours and Held", l, s.State())
	}
	must(t, "Resign", s.Resign(ctx))
	if _, err := s.Leader(ctx); !errors.Is(err, election.ErrNoLeader) {
		t.Fatalf("Leader after Resign: %v", err)
	}
}

// testLeaderNodeDeleted: an operator deletes the leader's node; the leader
// is told Lost and the next candidate leads.
func testLeaderNodeDeleted(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("election")
	a, b := election.New(env.Conn(t), dir), election.New(env.Conn(t), dir)
	must(t, "a.Campaign", a.Campaign(ctx, nil))
	bDone := bt.GoErr(func() error { return b.Campaign(ctx, nil) })
	bt.WaitChildren(t, ctx, env.Conn(t), dir, 2)
	must(t, "delete", env.Conn(t).Delete(ctx, a.Key(), -1))
	must(t, "b.Campaign", bt.Recv(t, ctx, bDone).Err)
	<-a.Done()
	if a.State() != recipes.Lost {
		t.Fatalf("a state %v, want Lost", a.State())
	}
	must(t, "a.Resign after loss", a.Resign(ctx))
	must(t, "b.Resign", b.Resign(ctx))
}

// testWakeups counts the listings the last of four candidates makes when
// the leader resigns: with predecessor watches it is not woken at all;
// with the herd variant it lists the directory again.
func testWakeups(t *testing.T, env *bt.Env, newElection func(zksim.Conn, string, ...election.Option) *election.Election, herd bool) {
	ctx := env.Ctx(t)
	dir := env.Path("election")
	es := make([]*election.Election, 4)
	var lastListings atomic.Int32
	done := make([]<-chan bt.Result[struct{}], 4)
	for i := range es {
		conn := env.MemConn(t)
		if i == 3 {
			conn.Server().Control(conn.SessionID()).SetFaultHook(func(r zkmem.Request, _ zkmem.ConnFault) zkmem.ConnFault {
				if r.Op == zkmem.OpGetChildren {
					lastListings.Add(1)
				}
				return zkmem.NoFault
			})
		}
		es[i] = newElection(conn, dir)
		done[i] = bt.GoErr(func() error { return es[i].Campaign(ctx, nil) })
		bt.WaitChildren(t, ctx, env.Conn(t), dir, i+1)
	}
	must(t, "first Campaign", bt.Recv(t, ctx, done[0]).Err)
	env.Settle()
	before := lastListings.Load()
	must(t, "Resign", es[0].Resign(ctx))
	must(t, "second Campaign", bt.Recv(t, ctx, done[1]).Err)
	env.Settle()
	woken := lastListings.Load() - before
	if herd && woken == 0 {
		t.Fatal("herd variant: the last candidate did not wake up")
	}
	if !herd && woken != 0 {
		t.Fatalf("predecessor variant: the last candidate listed %d times", woken)
	}
	for i := 1; i < 4; i++ {
		if i > 1 {
			must(t, "Campaign", bt.Recv(t, ctx, done[i]).Err)
		}
		must(t, "Resign", es[i].Resign(ctx))
	}
}

// testElectionChaos: candidates campaign and resign in a loop while a share
// of their requests lose replies or never arrive: one leader at a time,
// every campaign ends, no node is left.
func testElectionChaos(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("election")
	const candidates, terms = 3, 4
	var (
		leaders atomic.Int32
		wg      sync.WaitGroup
	)
	for i := 0; i < candidates; i++ {
		conn := env.MemConn(t)
		conn.Server().Control(conn.SessionID()).SetFaultHook(bt.Flaky(3 + i))
		e := election.New(conn, dir)
		wg.Go(func() {
			for term := 0; term < terms; term++ {
				if err := e.Campaign(ctx, fmt.Appendf(nil, "%d-%d", i, term)); err != nil {
					t.Errorf("Campaign: %v", err)
					return
				}
				if leaders.Add(1) != 1 {
					t.Error("two leaders at once")
				}
				leaders.Add(-1)
				if err := e.Resign(ctx); err != nil {
					t.Errorf("Resign: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	if children := bt.Children(t, ctx, env.Conn(t), dir); len(children) != 0 {
		t.Fatalf("orphans: %v", children)
	}
}
