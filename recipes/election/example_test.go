package election_test

import (
	"context"
	"fmt"
	"log"

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
