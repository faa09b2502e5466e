package queue_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/zksim/zksim/recipes/queue"
	bt "github.com/zksim/zksim/zktest"
)

var cases = bt.Cases{
	"FIFOOperations":         testFIFOOperations,
	"TakeWaits":              testTakeWaits,
	"ConsumersShare":         testConsumersShare,
	"PriorityOrder":          testPriorityOrder,
	"LockingAckRelease":      testLockingAckRelease,
	"LockingAckAfterRelease": testLockingAckAfterRelease,
	"LockingTakeWaits":       testLockingTakeWaits,
	"LockingConsumerCloses":  testLockingConsumerCloses,
	"DirectoryDeletedByHand": testDirectoryDeletedByHand,
}

func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func testFIFOOperations(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	q := queue.New(env.Conn(t), env.Path("q"))
	if _, err := q.Peek(ctx); !errors.Is(err, queue.ErrEmpty) {
		t.Fatalf("Peek on a queue never used: %v, want ErrEmpty", err)
	}
	if _, err := q.TryTake(ctx); !errors.Is(err, queue.ErrEmpty) {
		t.Fatalf("TryTake on a queue never used: %v, want ErrEmpty", err)
	}
	for i := 1; i <= 4; i++ {
		must(t, "Offer", q.Offer(ctx, []byte{byte(i)}))
	}
	if n, err := q.Len(ctx); err != nil || n != 4 {
		t.Fatalf("Len = %d, %v; want 4", n, err)
	}
	if d, err := q.Peek(ctx); err != nil || d[0] != 1 {
		t.Fatalf("Peek = %v %v, want 1", d, err)
	}
	if d, err := q.Peek(ctx); err != nil || d[0] != 1 {
		t.Fatalf("second Peek = %v %v, want 1 again", d, err)
	}
	if d, err := q.TryTake(ctx); err != nil || d[0] != 1 {
		t.Fatalf("TryTake = %v %v, want 1", d, err)
	}
	if d, err := q.TryTake(ctx); err != nil || d[0] != 2 {
		t.Fatalf("TryTake = %v %v, want 2", d, err)
	}
	if d, err := q.Take(ctx); err != nil || d[0] != 3 {
		t.Fatalf("Take = %v %v, want 3", d, err)
	}
	if d, err := q.Take(ctx); err != nil || d[0] != 4 {
		t.Fatalf("Take = %v %v, want 4", d, err)
	}
	if n, err := q.Len(ctx); err != nil || n != 0 {
		t.Fatalf("Len = %d, %v; want 0", n, err)
	}
	if _, err := q.TryTake(ctx); !errors.Is(err, queue.ErrEmpty) {
		t.Fatalf("TryTake after draining: %v, want ErrEmpty", err)
	}
	if _, err := q.Peek(ctx); !errors.Is(err, queue.ErrEmpty) {
		t.Fatalf("Peek after draining: %v, want ErrEmpty", err)
	}
}

func testTakeWaits(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("q")
	q := queue.New(env.Conn(t), dir)
	got := bt.Go(func() ([]byte, error) { return q.Take(ctx) })
	env.Settle()
	bt.Pending(t, got, "Take on an empty queue")
	must(t, "Offer", queue.New(env.Conn(t), dir).Offer(ctx, []byte("x")))
	if r := bt.Recv(t, ctx, got); r.Err != nil || string(r.Val) != "x" {
		t.Fatalf("Take = %q, %v", r.Val, r.Err)
	}
	cctx, cancel := context.WithCancel(ctx)
	got = bt.Go(func() ([]byte, error) { return q.Take(cctx) })
	cancel()
	if r := bt.Recv(t, ctx, got); !errors.Is(r.Err, context.Canceled) {
		t.Fatalf("cancelled Take: %v", r.Err)
	}
}

// testConsumersShare: two producers and three consumers; every item is
// consumed exactly once, and each consumer sees each producer's items in
// the order they were offered.
func testConsumersShare(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("q")
	const producers, perProducer, consumers = 2, 10, 3
	var wg sync.WaitGroup
	for p := 0; p < producers; p++ {
		q := queue.New(env.Conn(t), dir)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perProducer; i++ {
				if err := q.Offer(ctx, fmt.Appendf(nil, "%d-%02d", p, i)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	results := make([][]string, consumers)
	var mu sync.Mutex
	total := 0
	for c := 0; c < consumers; c++ {
		q := queue.New(env.Conn(t), dir)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if total == producers*perProducer {
					mu.Unlock()
					return
				}
				total++
				mu.Unlock()
				d, err := q.Take(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				results[c] = append(results[c], string(d))
			}
		}()
	}
	wg.Wait()
	var all []string
	for c, r := range results {
		for p := 0; p < producers; p++ {
			var mine []string
			for _, s := range r {
				if s[0] == byte('0'+p) {
					mine = append(mine, s)
				}
			}
			if !slices.IsSorted(mine) {
				t.Errorf("consumer %d saw producer %d out of order: %v", c, p, mine)
			}
		}
		all = append(all, r...)
	}
	slices.Sort(all)
	if len(all) != producers*perProducer || len(slices.Compact(slices.Clone(all))) != len(all) {
		t.Fatalf("consumed %v: want each of %d items once", all, producers*perProducer)
	}
}

func testPriorityOrder(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	q := queue.NewPriority(env.Conn(t), env.Path("pq"))
	for _, it := range []struct {
		data string
		prio int32
	}{{"c1", 5}, {"a1", -3}, {"b1", 0}, {"c2", 5}, {"a2", -3}, {"z", 2147483647}, {"first", -2147483648}, {"b2", 0}} {
		must(t, "Offer", q.Offer(ctx, []byte(it.data), it.prio))
	}
	if d, err := q.Peek(ctx); err != nil || string(d) != "first" {
		t.Fatalf("Peek = %q, %v", d, err)
	}
	var got []string
	for {
		d, err := q.TryTake(ctx)
		if errors.Is(err, queue.ErrEmpty) {
			break
		}
		must(t, "TryTake", err)
		got = append(got, string(d))
	}
	want := []string{"first", "a1", "a2", "b1", "b2", "c1", "c2", "z"}
	if !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	taken := bt.Go(func() ([]byte, error) { return q.Take(ctx) })
	env.Settle()
	bt.Pending(t, taken, "Take on an empty priority queue")
	must(t, "Offer", q.Offer(ctx, []byte("late"), 1))
	if r := bt.Recv(t, ctx, taken); r.Err != nil || string(r.Val) != "late" {
		t.Fatalf("Take = %q, %v", r.Val, r.Err)
	}
}

func testLockingAckRelease(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("lq")
	a, b := queue.NewLocking(env.Conn(t), dir), queue.NewLocking(env.Conn(t), dir)
	must(t, "Offer 1", a.Offer(ctx, []byte("1")))
	must(t, "Offer 2", a.Offer(ctx, []byte("2")))
	i1, err := a.Take(ctx)
	must(t, "a.Take", err)
	if string(i1.Data()) != "1" {
		t.Fatalf("a took %q, want 1", i1.Data())
	}
	i2, err := b.TryTake(ctx)
	if err != nil || string(i2.Data()) != "2" {
		t.Fatalf("b.TryTake: %v, want item 2 (item 1 is claimed)", err)
	}
	if _, err := b.TryTake(ctx); !errors.Is(err, queue.ErrEmpty) {
		t.Fatalf("TryTake with every item claimed: %v, want ErrEmpty", err)
	}
	must(t, "b releases 2", i2.Release(ctx))
	if err := i2.Release(ctx); !errors.Is(err, queue.ErrClaimLost) {
		t.Fatalf("second Release: %v, want ErrClaimLost", err)
	}
	i2b, err := b.Take(ctx)
	must(t, "b.Take again", err)
	if string(i2b.Data()) != "2" {
		t.Fatalf("b took %q after release, want 2", i2b.Data())
	}
	must(t, "a acks 1", i1.Ack(ctx))
	must(t, "b acks 2", i2b.Ack(ctx))
	if n, err := a.Len(ctx); err != nil || n != 0 {
		t.Fatalf("Len after acks = %d, %v", n, err)
	}
	if claims := bt.Children(t, ctx, env.Conn(t), dir+"/claims"); len(claims) != 0 {
		t.Fatalf("claims left: %v", claims)
	}
	if err := i1.Ack(ctx); !errors.Is(err, queue.ErrClaimLost) {
		t.Fatalf("second Ack: %v, want ErrClaimLost", err)
	}
}

// testLockingAckAfterRelease: an Ack of an item its consumer released,
// and another consumer claimed since, must fail with ErrClaimLost and leave
// the item and the other's claim alone.
func testLockingAckAfterRelease(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("lq")
	a, b := queue.NewLocking(env.Conn(t), dir), queue.NewLocking(env.Conn(t), dir)
	must(t, "Offer", a.Offer(ctx, []byte("1")))
	ia, err := a.Take(ctx)
	must(t, "a.Take", err)
	must(t, "a releases", ia.Release(ctx))
	ib, err := b.TryTake(ctx)
	must(t, "b.TryTake", err)
	if err := ia.Ack(ctx); !errors.Is(err, queue.ErrClaimLost) {
		t.Fatalf("Ack after Release, the item claimed by another: %v, want ErrClaimLost", err)
	}
	if n, err := a.Len(ctx); err != nil || n != 1 {
		t.Fatalf("Len after the stale Ack = %d, %v; want 1 (the item is b's)", n, err)
	}
	must(t, "b acks", ib.Ack(ctx))
}

func testLockingTakeWaits(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("lq")
	a, b := queue.NewLocking(env.Conn(t), dir), queue.NewLocking(env.Conn(t), dir)
	must(t, "Offer", a.Offer(ctx, []byte("only")))
	it, err := a.Take(ctx)
	must(t, "a.Take", err)
	got := bt.Go(func() (*queue.Item, error) { return b.Take(ctx) })
	env.Settle()
	bt.Pending(t, got, "Take with the only item claimed")
	must(t, "release", it.Release(ctx))
	r := bt.Recv(t, ctx, got)
	must(t, "b.Take", r.Err)
	if string(r.Val.Data()) != "only" {
		t.Fatalf("b took %q", r.Val.Data())
	}
	must(t, "ack", r.Val.Ack(ctx))
}

// testLockingConsumerCloses: a consumer closes its Conn before acking; the
// item goes to another consumer.
func testLockingConsumerCloses(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("lq")
	aConn := env.Conn(t)
	a, b := queue.NewLocking(aConn, dir), queue.NewLocking(env.Conn(t), dir)
	must(t, "Offer", b.Offer(ctx, []byte("job")))
	it, err := a.Take(ctx)
	must(t, "a.Take", err)
	got := bt.Go(func() (*queue.Item, error) { return b.Take(ctx) })
	must(t, "close a", aConn.Close())
	r := bt.Recv(t, ctx, got)
	must(t, "b.Take", r.Err)
	if string(r.Val.Data()) != "job" {
		t.Fatalf("b took %q", r.Val.Data())
	}
	if err := it.Ack(ctx); !errors.Is(err, queue.ErrClaimLost) {
		t.Fatalf("Ack by the closed consumer: %v, want ErrClaimLost", err)
	}
	must(t, "b acks", r.Val.Ack(ctx))
}

// testDirectoryDeletedByHand: an operator deletes the queue's directory
// while it is empty (the producer's receipt deleted by hand first); the
// producer's next Offer makes the directory again ("created on first
// use"), as if it were the first, instead of failing with ErrNoNode.
func testDirectoryDeletedByHand(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("q")
	conn, op := env.Conn(t), env.Conn(t)
	q := queue.New(conn, dir)
	must(t, "first Offer", q.Offer(ctx, []byte("1")))
	d, err := q.TryTake(ctx)
	must(t, "TryTake", err)
	names, _, err := op.Children(ctx, dir)
	must(t, "list by hand", err)
	for _, n := range names {
		must(t, "delete by hand", op.Delete(ctx, dir+"/"+n, -1))
	}
	must(t, "delete the directory by hand", op.Delete(ctx, dir, -1))
	must(t, "Offer after the directory was deleted", q.Offer(ctx, []byte("2")))
	if d2, err := q.TryTake(ctx); err != nil || string(d) != "1" || string(d2) != "2" {
		t.Fatalf("took %q then %q, %v; want 1 then 2", d, d2, err)
	}
}
