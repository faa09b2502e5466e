package election_test

import (
	"context"
	"errors"
	"path"
	"regexp"
	"testing"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/election"
	bt "github.com/zksim/zksim/zktest"
)

var cases = bt.Cases{
	"Basics":              testBasics,
	"Succession":          func(t *testing.T, env *bt.Env) { testSuccession(t, env, election.New) },
	"SuccessionHerd":      func(t *testing.T, env *bt.Env) { testSuccession(t, env, election.NewHerd) },
	"CancelRemovesNode":   testCancelRemovesNode,
	"LeaderClosed":        testLeaderClosed,
	"SingleNode":          testSingleNode,
	"ObserveBeforeLeader": testObserveBeforeLeader,
	"Resume":              testResume,
	"ResumeCancel":        testResumeCancel,
	"Guard":               testGuard,
}

var candidateName = regexp.MustCompile(`^_c_[0-9a-f-]{36}-n_\d{10}$`)

func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// next returns the next leader Observe reports.
func next(t *testing.T, ctx context.Context, ch <-chan election.Leader) election.Leader {
	t.Helper()
	select {
	case l, ok := <-ch:
		if !ok {
			t.Fatal("Observe channel closed")
		}
		return l
	case <-ctx.Done():
		t.Fatal("no leader observed")
	}
	return election.Leader{}
}

func testBasics(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	conn := env.Conn(t)
	dir := env.Path("election")
	e := election.New(conn, dir)
	if _, err := e.Leader(ctx); !errors.Is(err, election.ErrNoLeader) {
		t.Fatalf("Leader with no candidate: %v, want ErrNoLeader", err)
	}
	if err := e.Resign(ctx); !errors.Is(err, election.ErrNotLeader) {
		t.Fatalf("Resign before Campaign: %v, want ErrNotLeader", err)
	}
	must(t, "Campaign", e.Campaign(ctx, []byte("a")))
	if err := e.Campaign(ctx, []byte("a")); !errors.Is(err, election.ErrCampaigning) {
		t.Fatalf("second Campaign: %v, want ErrCampaigning", err)
	}
	if e.State() != recipes.Held {
		t.Fatalf("state %v, want Held", e.State())
	}
	if path.Dir(e.Key()) != dir || !candidateName.MatchString(path.Base(e.Key())) {
		t.Fatalf("key %q does not follow %s/_c_<guid>-n_<seq>", e.Key(), dir)
	}
	l, err := e.Leader(ctx)
	must(t, "Leader", err)
	if l.Key != e.Key() || string(l.Value) != "a" || l.Token != e.Token() || l.Session != conn.SessionID() {
		t.Fatalf("Leader = %+v; want key %s value a token %d session %#x", l, e.Key(), e.Token(), conn.SessionID())
	}
	must(t, "Proclaim", e.Proclaim(ctx, []byte("a2")))
	if l, err := e.Leader(ctx); err != nil || string(l.Value) != "a2" {
		t.Fatalf("Leader after Proclaim = %+v, %v", l, err)
	}
	must(t, "Resign", e.Resign(ctx))
	if e.State() != recipes.Released {
		t.Fatalf("state after Resign %v", e.State())
	}
	if _, err := e.Leader(ctx); !errors.Is(err, election.ErrNoLeader) {
		t.Fatalf("Leader after Resign: %v, want ErrNoLeader", err)
	}
	if err := e.Proclaim(ctx, nil); !errors.Is(err, election.ErrNotLeader) {
		t.Fatalf("Proclaim after Resign: %v, want ErrNotLeader", err)
	}
	if err := e.Resign(ctx); !errors.Is(err, election.ErrNotLeader) {
		t.Fatalf("second Resign: %v, want ErrNotLeader", err)
	}
}

// testSuccession: candidates lead in the order they campaigned, each only
// after the previous one resigned, and Observe reports every leader and
// every proclaimed value.
func testSuccession(t *testing.T, env *bt.Env, newElection func(zksim.Conn, string, ...election.Option) *election.Election) {
	ctx := env.Ctx(t)
	dir := env.Path("election")
	observer := env.Conn(t)
	obs := election.New(observer, dir).Observe(ctx)
	es := []*election.Election{newElection(env.Conn(t), dir), newElection(env.Conn(t), dir), newElection(env.Conn(t), dir)}
	must(t, "a.Campaign", es[0].Campaign(ctx, []byte("a")))
	if l := next(t, ctx, obs); string(l.Value) != "a" {
		t.Fatalf("observed %q, want a", l.Value)
	}
	bDone := bt.GoErr(func() error { return es[1].Campaign(ctx, []byte("b")) })
	bt.WaitChildren(t, ctx, observer, dir, 2)
	cDone := bt.GoErr(func() error { return es[2].Campaign(ctx, []byte("c")) })
	bt.WaitChildren(t, ctx, observer, dir, 3)
	env.Settle()
	bt.Pending(t, bDone, "b.Campaign while a leads")
	must(t, "a.Proclaim", es[0].Proclaim(ctx, []byte("a2")))
	if l := next(t, ctx, obs); string(l.Value) != "a2" {
		t.Fatalf("observed %q, want a2", l.Value)
	}
	must(t, "a.Resign", es[0].Resign(ctx))
	must(t, "b.Campaign", bt.Recv(t, ctx, bDone).Err)
	if l := next(t, ctx, obs); string(l.Value) != "b" || l.Key != es[1].Key() || l.Token <= es[0].Token() {
		t.Fatalf("observed %+v, want b with a token above %d", l, es[0].Token())
	}
	env.Settle()
	bt.Pending(t, cDone, "c.Campaign while b leads")
	must(t, "b.Resign", es[1].Resign(ctx))
	must(t, "c.Campaign", bt.Recv(t, ctx, cDone).Err)
	if l := next(t, ctx, obs); string(l.Value) != "c" {
		t.Fatalf("observed %q, want c", l.Value)
	}
	must(t, "c.Resign", es[2].Resign(ctx))
}

func testCancelRemovesNode(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("election")
	observer := env.Conn(t)
	a, b := election.New(env.Conn(t), dir), election.New(env.Conn(t), dir)
	must(t, "a.Campaign", a.Campaign(ctx, nil))
	bctx, cancel := context.WithCancel(ctx)
	bDone := bt.GoErr(func() error { return b.Campaign(bctx, nil) })
	bt.WaitChildren(t, ctx, observer, dir, 2)
	cancel()
	if err := bt.Recv(t, ctx, bDone).Err; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Campaign: %v, want context.Canceled", err)
	}
	if children := bt.Children(t, ctx, observer, dir); len(children) != 1 || dir+"/"+children[0] != a.Key() {
		t.Fatalf("children %v, want only the leader's", children)
	}
	must(t, "a.Resign", a.Resign(ctx))
}

// testLeaderClosed: a leader that closes its Conn is told Lost and the
// next candidate leads.
func testLeaderClosed(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("election")
	aConn := env.Conn(t)
	a, b := election.New(aConn, dir), election.New(env.Conn(t), dir)
	must(t, "a.Campaign", a.Campaign(ctx, nil))
	bDone := bt.GoErr(func() error { return b.Campaign(ctx, nil) })
	bt.WaitChildren(t, ctx, env.Conn(t), dir, 2)
	must(t, "close", aConn.Close())
	must(t, "b.Campaign", bt.Recv(t, ctx, bDone).Err)
	select {
	case <-a.Done():
	case <-ctx.Done():
		t.Fatal("a not told it lost leadership")
	}
	if a.State() != recipes.Lost {
		t.Fatalf("a state %v, want Lost", a.State())
	}
	must(t, "b.Resign", b.Resign(ctx))
}

func testSingleNode(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	p := env.Path("app/leader")
	observer := env.Conn(t)
	obs := election.NewSingleNode(observer, p).Observe(ctx)
	aConn := env.Conn(t)
	a, b := election.NewSingleNode(aConn, p), election.NewSingleNode(env.Conn(t), p)
	if _, err := a.Leader(ctx); !errors.Is(err, election.ErrNoLeader) {
		t.Fatalf("Leader before any campaign: %v", err)
	}
	must(t, "a.Campaign", a.Campaign(ctx, []byte("a")))
	if a.State() != recipes.Held {
		t.Fatalf("a state %v", a.State())
	}
	if l := next(t, ctx, obs); string(l.Value) != "a" || l.Session != aConn.SessionID() || l.Token != a.Token() {
		t.Fatalf("observed %+v", l)
	}
	bDone := bt.GoErr(func() error { return b.Campaign(ctx, []byte("b")) })
	env.Settle()
	bt.Pending(t, bDone, "b.Campaign while a leads")
	must(t, "a.Resign", a.Resign(ctx))
	must(t, "b.Campaign", bt.Recv(t, ctx, bDone).Err)
	if l := next(t, ctx, obs); string(l.Value) != "b" || l.Token <= a.Token() {
		t.Fatalf("observed %+v", l)
	}
	if err := a.Resign(ctx); !errors.Is(err, election.ErrNotLeader) {
		t.Fatalf("Resign when not leading: %v", err)
	}
	must(t, "b.Resign", b.Resign(ctx))
}

// testObserveBeforeLeader: Observe started before the directory exists
// reports the first leader.
func testObserveBeforeLeader(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("not/yet/election")
	obs := election.New(env.Conn(t), dir).Observe(ctx)
	e := election.New(env.Conn(t), dir)
	must(t, "Campaign", e.Campaign(ctx, []byte("first")))
	if l := next(t, ctx, obs); string(l.Value) != "first" {
		t.Fatalf("observed %+v", l)
	}
	must(t, "Resign", e.Resign(ctx))
}
