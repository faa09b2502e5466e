package election_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/election"
	bt "github.com/zksim/zksim/zktest"
)

// candidate makes a candidate node of dir by hand, as a user of Resume
// would.
func candidate(t *testing.T, ctx context.Context, conn zksim.Conn, dir, value string) string {
	t.Helper()
	key, err := recipes.CreateProtectedEphemeralSequential(ctx, conn, dir+"/"+election.CandidateName, []byte(value), zksim.OpenACL())
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// testResume: Resume refuses what is not a candidate node of our session,
// takes over a node that leads at once, and waits its turn with one that
// does not.
func testResume(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("election")
	c1, c2 := env.Conn(t), env.Conn(t)
	a := election.New(c1, dir)
	must(t, "a.Campaign", a.Campaign(ctx, []byte("a")))

	b := election.New(c2, dir)
	for what, key := range map[string]string{
		"another session's node": a.Key(),
		"a missing node":         dir + "/_c_00000000-0000-4000-8000-000000000000-n_0000000099",
		"a node of another dir":  candidate(t, ctx, c2, env.Path("other"), "x"),
	} {
		if err := b.Resume(ctx, key); !errors.Is(err, election.ErrNotCandidate) {
			t.Fatalf("Resume with %s: %v, want ErrNotCandidate", what, err)
		}
	}
	if b.State() != recipes.NotHeld {
		t.Fatalf("after refused Resumes b is %v, want NotHeld", b.State())
	}

	key := candidate(t, ctx, c2, dir, "b")
	done := bt.GoErr(func() error { return b.Resume(ctx, key) })
	env.Settle()
	bt.Pending(t, done, "Resume behind the leader")
	must(t, "a.Resign", a.Resign(ctx))
	must(t, "b.Resume", bt.Recv(t, ctx, done).Err)
	if b.Key() != key || b.State() != recipes.Held {
		t.Fatalf("b leads with %s (%v), want %s, Held", b.Key(), b.State(), key)
	}
	l, err := b.Leader(ctx)
	must(t, "Leader", err)
	if l.Key != key || string(l.Value) != "b" || l.Token != b.Token() {
		t.Fatalf("leader %+v, want %s with value b and token %d", l, key, b.Token())
	}
	if err := b.Resume(ctx, key); !errors.Is(err, election.ErrCampaigning) {
		t.Fatalf("Resume while leading: %v, want ErrCampaigning", err)
	}

	// Another Election value of the same session takes over the node
	// that leads, at once.
	b2 := election.New(c2, dir)
	must(t, "b2.Resume", b2.Resume(ctx, key))
	if b2.State() != recipes.Held || b2.Token() != b.Token() {
		t.Fatalf("b2 %v token %d, want Held with b's token %d", b2.State(), b2.Token(), b.Token())
	}
	must(t, "b2.Resign", b2.Resign(ctx))
}

// watchSignal closes set after its first ExistsW.
type watchSignal struct {
	zksim.Conn
	set  chan struct{}
	once sync.Once
}

func (c *watchSignal) ExistsW(ctx context.Context, path string) (bool, *zksim.Stat, <-chan zksim.Event, error) {
	ok, st, w, err := c.Conn.ExistsW(ctx, path)
	c.once.Do(func() { close(c.set) })
	return ok, st, w, err
}

// testResumeCancel: a Resume that gives up deletes the node, as Campaign
// does.
func testResumeCancel(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("election")
	observer := env.Conn(t)
	a := election.New(env.Conn(t), dir)
	must(t, "a.Campaign", a.Campaign(ctx, nil))
	c2 := env.Conn(t)
	key := candidate(t, ctx, c2, dir, "b")
	cctx, cancel := context.WithCancel(ctx)
	watching := &watchSignal{Conn: c2, set: make(chan struct{})}
	done := bt.GoErr(func() error { return election.New(watching, dir).Resume(cctx, key) })
	// Cancel once Resume waits: it has set its watch on the leader.
	select {
	case <-watching.set:
	case <-ctx.Done():
		t.Fatal("Resume never watched the leader")
	}
	cancel()
	if err := bt.Recv(t, ctx, done).Err; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Resume: %v, want context.Canceled", err)
	}
	if ok, _, err := observer.Exists(ctx, key); err != nil || ok {
		t.Fatalf("after a cancelled Resume the node exists: %v, %v", ok, err)
	}
	must(t, "a.Resign", a.Resign(ctx))
}

// testGuard: the leader's guard lets a Multi through while it leads and
// stops it once it has resigned.
func testGuard(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	conn := env.Conn(t)
	dir, data := env.Path("election"), env.Path("data")
	e := election.New(conn, dir)
	if _, err := e.Guard(); !errors.Is(err, election.ErrNotLeader) {
		t.Fatalf("Guard before Campaign: %v, want ErrNotLeader", err)
	}
	must(t, "Campaign", e.Campaign(ctx, nil))
	must(t, "Proclaim", e.Proclaim(ctx, []byte("v2"))) // the node's version changes
	guard, err := e.Guard()
	must(t, "Guard", err)
	create := &zksim.CreateOp{Path: data, Mode: zksim.ModePersistent, ACL: zksim.OpenACL()}
	if _, err := conn.Multi(ctx, guard, create); err != nil {
		t.Fatalf("guarded Multi while leading: %v", err)
	}
	must(t, "Resign", e.Resign(ctx))
	if _, err := e.Guard(); !errors.Is(err, election.ErrNotLeader) {
		t.Fatalf("Guard after Resign: %v, want ErrNotLeader", err)
	}
	if _, err := conn.Multi(ctx, guard, &zksim.DeleteOp{Path: data, Version: -1}); !errors.Is(err, zksim.ErrNoNode) {
		t.Fatalf("Multi with the guard of a resigned leader: %v, want ErrNoNode", err)
	}
}
