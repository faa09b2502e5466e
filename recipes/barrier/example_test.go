package barrier_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/zksim/zksim/recipes/barrier"
	"github.com/zksim/zksim/zkmem"
)

func ExampleBarrier() {
	ctx := context.Background()
	srv := zkmem.NewServer(zkmem.Options{})
	defer srv.Close()
	coordinator, _ := srv.Connect()
	worker, _ := srv.Connect()

	gate := barrier.New(coordinator, "/barriers/deploy")
	_ = gate.Set(ctx)
	released := make(chan error)
	go func() { released <- barrier.New(worker, "/barriers/deploy").Wait(ctx) }()
	_ = gate.Remove(ctx)
	fmt.Println("worker released:", <-released)
	// Output: worker released: <nil>
}

// Three members compute together: none starts before all entered, none
// finishes before all left.
func ExampleDoubleBarrier() {
	ctx := context.Background()
	srv := zkmem.NewServer(zkmem.Options{})
	defer srv.Close()

	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for i := 0; i < 3; i++ {
		conn, _ := srv.Connect()
		b := barrier.NewDouble(conn, "/barriers/step", 3)
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- b.Enter(ctx)
			// ... compute ...
			errs <- b.Leave(ctx)
		}()
	}
	wg.Wait()
	close(errs)
	failed := 0
	for err := range errs {
		if err != nil {
			failed++
		}
	}
	fmt.Println("failures:", failed)
	// Output: failures: 0
}

// A group of two starts together.
func ExampleStartBarrier() {
	ctx := context.Background()
	srv := zkmem.NewServer(zkmem.Options{})
	defer srv.Close()
	c1, _ := srv.Connect()
	c2, _ := srv.Connect()

	started := make(chan error)
	go func() { started <- barrier.NewStart(c1, "/barriers/race", 2).Wait(ctx) }()
	fmt.Println("second member:", barrier.NewStart(c2, "/barriers/race", 2).Wait(ctx))
	fmt.Println("first member:", <-started)
	// Output:
	// second member: <nil>
	// first member: <nil>
}
