package election_test

import (
	"context"
	"fmt"
	"log"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/election"
	"github.com/zksim/zksim/zkmem"
)

// Two candidates; the second leads once the first resigns. An observer
// sees both.
func ExampleElection() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := zkmem.NewServer(zkmem.Options{})
	defer srv.Close()
	c1, _ := srv.Connect()
	c2, _ := srv.Connect()
	c3, _ := srv.Connect()

	leaders := election.New(c3, "/election/app").Observe(ctx)
	a, b := election.New(c1, "/election/app"), election.New(c2, "/election/app")
	if err := a.Campaign(ctx, []byte("node-a")); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("leader: %s\n", (<-leaders).Value)

	bLeads := make(chan error)
	go func() { bLeads <- b.Campaign(ctx, []byte("node-b")) }()
	_ = a.Resign(ctx)
	if err := <-bLeads; err != nil {
		log.Fatal(err)
	}
	fmt.Printf("leader: %s\n", (<-leaders).Value)
	fmt.Println("a:", a.State(), "b:", b.State())
	_ = b.Resign(ctx)
	// Output:
	// leader: node-a
	// leader: node-b
	// a: Released b: Held
}

// The leader learns its session expired, and the next candidate takes
// over with a larger token.
func ExampleElection_Done() {
	ctx := context.Background()
	srv := zkmem.NewServer(zkmem.Options{})
	defer srv.Close()
	c1, _ := srv.Connect()
	c2, _ := srv.Connect()

	a, b := election.New(c1, "/election/app"), election.New(c2, "/election/app")
	_ = a.Campaign(ctx, nil)
	bLeads := make(chan error)
	go func() { bLeads <- b.Campaign(ctx, nil) }()
	c1.Server().Control(c1.SessionID()).Expire()
	<-a.Done()
	fmt.Println("a:", a.State())
	fmt.Println("b:", <-bLeads, b.State(), b.Token() > a.Token())
	_ = b.Resign(ctx)
	// Output:
	// a: Lost
	// b: <nil> Held true
}

// The single-node variant, kept for comparison: whoever creates the node
// leads.
func ExampleNewSingleNode() {
	ctx := context.Background()
	srv := zkmem.NewServer(zkmem.Options{})
	defer srv.Close()
	conn, _ := srv.Connect()

	s := election.NewSingleNode(conn, "/app/leader")
	_ = s.Campaign(ctx, []byte("me"))
	l, _ := s.Leader(ctx)
	fmt.Printf("%s %v\n", l.Value, l.Session == conn.SessionID())
	_ = s.Resign(ctx)
	_, err := s.Leader(ctx)
	fmt.Println(err)
	// Output:
	// me true
	// election: no leader
}

// The herd variant, kept for benchmarks: the same election, but waiters
// watch every candidate.
func ExampleNewHerd() {
	ctx := context.Background()
	srv := zkmem.NewServer(zkmem.Options{})
	defer srv.Close()
	conn, _ := srv.Connect()

	e := election.NewHerd(conn, "/election/bench")
	fmt.Println(e.Campaign(ctx, nil), e.State())
	_ = e.Resign(ctx)
	// Output: <nil> Held
}

// A candidate node made earlier on this session (here by hand, with the
// protected create) is resumed: the candidate waits its turn with it and
// leads once the leader resigns.
func ExampleElection_Resume() {
	ctx := context.Background()
	srv := zkmem.NewServer(zkmem.Options{})
	defer srv.Close()
	c1, _ := srv.Connect()
	c2, _ := srv.Connect()

	a := election.New(c1, "/election/app")
	_ = a.Campaign(ctx, []byte("node-a"))

	key, err := recipes.CreateProtectedEphemeralSequential(ctx, c2, "/election/app/"+election.CandidateName, []byte("node-b"), zksim.OpenACL())
	if err != nil {
		log.Fatal(err)
	}
	b := election.New(c2, "/election/app")
	bLeads := make(chan error)
	go func() { bLeads <- b.Resume(ctx, key) }()
	_ = a.Resign(ctx)
	fmt.Println("resumed:", <-bLeads, b.Key() == key, b.State())
	l, _ := b.Leader(ctx)
	fmt.Printf("leader: %s\n", l.Value)
	// Output:
	// resumed: <nil> true Held
	// leader: node-b
}

// The leader writes through a guarded Multi: applied only while it leads.
func ExampleElection_Guard() {
	ctx := context.Background()
	srv := zkmem.NewServer(zkmem.Options{})
	defer srv.Close()
	conn, _ := srv.Connect()

	e := election.New(conn, "/election/app")
	_ = e.Campaign(ctx, nil)
	guard, _ := e.Guard()
	_, err := conn.Multi(ctx, guard, &zksim.CreateOp{Path: "/epoch", Data: []byte("1"), Mode: zksim.ModePersistent, ACL: zksim.OpenACL()})
	fmt.Println("leading:", err)
	_ = e.Resign(ctx)
	_, err = conn.Multi(ctx, guard, &zksim.SetOp{Path: "/epoch", Data: []byte("2"), Version: -1})
	fmt.Println("after Resign:", err)
	// Output:
	// leading: <nil>
	// after Resign: zk: node does not exist
}

// Go candidates in an election that Curator's LeaderLatch candidates take
// part in on the same directory: every candidate names and orders its node
// as LeaderLatch does (CuratorSelector and Kazoo are the other layouts).
func ExampleWithLayout() {
	ctx := context.Background()
	srv := zkmem.NewServer(zkmem.Options{})
	defer srv.Close()
	a, _ := srv.Connect()
	b, _ := srv.Connect()

	ea := election.New(a, "/election/app", election.WithLayout(election.CuratorLatch))
	eb := election.New(b, "/election/app", election.WithLayout(election.CuratorLatch))
	if err := ea.Campaign(ctx, []byte("a")); err != nil {
		log.Fatal(err)
	}
	key := ea.Key() // /election/app/_c_<guid>-latch-0000000000
	fmt.Println("candidate node:", key[len(key)-16:])
	done := make(chan error, 1)
	go func() { done <- eb.Campaign(ctx, []byte("b")) }()
	if err := ea.Resign(ctx); err != nil {
		log.Fatal(err)
	}
	if err := <-done; err != nil {
		log.Fatal(err)
	}
	l, _ := eb.Leader(ctx)
	fmt.Printf("leader: %s\n", l.Value)
	// Output:
	// candidate node: latch-0000000000
	// leader: b
}
