package queue_test

import (
	"context"
	"fmt"

	"github.com/zksim/zksim/recipes/queue"
	"github.com/zksim/zksim/zkmem"
)

func ExampleQueue() {
	ctx := context.Background()
	srv := zkmem.NewServer(zkmem.Options{})
	defer srv.Close()
	conn, _ := srv.Connect()

	q := queue.New(conn, "/queues/jobs")
	for _, job := range []string{"build", "test", "ship"} {
		_ = q.Offer(ctx, []byte(job))
	}
	head, _ := q.Element(ctx)
	fmt.Printf("head: %s\n", head)
	for {
		job, ok, _ := q.Poll(ctx)
		if !ok {
			break
		}
		fmt.Printf("%s\n", job)
	}
	_, err := q.Remove(ctx)
	fmt.Println(err)
	// Output:
	// head: build
	// build
	// test
	// ship
	// queue: empty
}

func ExamplePriorityQueue() {
	ctx := context.Background()
	srv := zkmem.NewServer(zkmem.Options{})
	defer srv.Close()
	conn, _ := srv.Connect()

	q := queue.NewPriority(conn, "/queues/alerts")
	_ = q.Offer(ctx, []byte("disk 80%"), 5)
	_ = q.Offer(ctx, []byte("node down"), 0)
	_ = q.Offer(ctx, []byte("disk 90%"), 5)
	for i := 0; i < 3; i++ {
		a, _ := q.Take(ctx)
		fmt.Printf("%s\n", a)
	}
	// Output:
	// node down
	// disk 80%
	// disk 90%
}

// A consumer dies before acknowledging its item; another consumer gets it.
func ExampleLockingQueue() {
	ctx := context.Background()
	srv := zkmem.NewServer(zkmem.Options{})
	defer srv.Close()
	c1, _ := srv.Connect()
	c2, _ := srv.Connect()

	crashing, healthy := queue.NewLocking(c1, "/queues/work"), queue.NewLocking(c2, "/queues/work")
	_ = healthy.Offer(ctx, []byte("resize image 42"))
	item, _ := crashing.Take(ctx)
	fmt.Printf("first consumer took %q\n", item.Data())
	c1.Server().Control(c1.SessionID()).Expire() // crashes before Ack

	again, _ := healthy.Take(ctx)
	fmt.Printf("second consumer took %q\n", again.Data())
	fmt.Println("ack:", again.Ack(ctx))
	n, _ := healthy.Len(ctx)
	fmt.Println("left:", n)
	// Output:
	// first consumer took "resize image 42"
	// second consumer took "resize image 42"
	// ack: <nil>
	// left: 0
}
