package barrier_test

import (
	"context"
	"fmt"
	"log"
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
		b, err := barrier.NewDouble(conn, "/barriers/step", 3)
		if err != nil {
			log.Fatal(err)
		}
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

	_, err := barrier.NewStart(c1, "/barriers/race", 0)
	fmt.Println(err)
	first, err := barrier.NewStart(c1, "/barriers/race", 2)
	if err != nil {
		log.Fatal(err)
	}
	second, err := barrier.NewStart(c2, "/barriers/race", 2)
	if err != nil {
		log.Fatal(err)
	}
	started := make(chan error)
	go func() { started <- first.Wait(ctx) }()
	fmt.Println("second member:", second.Wait(ctx))
	fmt.Println("first member:", <-started)
	// Output:
	// zk: bad arguments: barrier.NewStart: size 0 is less than 1
	// second member: <nil>
	// first member: <nil>
}
