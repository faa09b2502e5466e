package queue_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes/queue"
	"github.com/zksim/zksim/zkmem"
	bt "github.com/zksim/zksim/zktest"
)

// faultCases put the queues under zkmem's faults.
var faultCases = bt.Cases{
	"FaultLostOfferReply":            testLostOfferReply,
	"FaultLostOfferReplyItemTaken":   testLostOfferReplyItemTaken,
	"FaultLostRemoveReply":           testLostRemoveReply,
	"FaultQueueChaos":                testQueueChaos,
	"FaultConsumerDiesMidItem":       testConsumerDiesMidItem,
	"FaultConsumerReconnects":        testConsumerReconnects,
	"FaultLostClaimReply":            testLostClaimReply,
	"FaultCancelAfterLostClaimReply": testCancelAfterLostClaimReply,
	"FaultLostAckReply":              testLostAckReply,
	"FaultLockingConsumersDie":       testLockingConsumersDie,
	"FaultAckCancelledItemDeleted":   testAckCancelledItemDeleted,
	"FaultTakeRenewedDuringCleanup":  testTakeRenewedDuringCleanup,
	"FaultAckOnRenewedSession":       testAckOnRenewedSession,
	"FaultTryTakeAuthFailsInCleanup": testTryTakeAuthFailsInCleanup,
}

// testLostOfferReply: an Offer whose create reply is lost, or whose
// request is dropped, adds the item exactly once.
func testLostOfferReply(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	conn := env.MemConn(t)
	q := queue.New(conn, env.Path("q"))
	must(t, "first Offer", q.Offer(ctx, []byte("0")))
	conn.Server().Control(conn.SessionID()).LoseNextReply(zkmem.OpMulti)
	must(t, "Offer with a lost reply", q.Offer(ctx, []byte("1")))
	conn.Server().Control(conn.SessionID()).DropNextRequest(zkmem.OpMulti)
	must(t, "Offer with a dropped request", q.Offer(ctx, []byte("2")))
	var got []string
	for {
		d, err := q.TryTake(ctx)
		if errors.Is(err, queue.ErrEmpty) {
			break
		}
		must(t, "TryTake", err)
		got = append(got, string(d))
	}
	if !slices.Equal(got, []string{"0", "1", "2"}) {
		t.Fatalf("items %v, want [0 1 2]", got)
	}
}

// testLostOfferReplyItemTaken: the producer's offer is applied but its
// reply is lost, and while the producer is reconnecting a consumer takes
// the item. The producer must not offer it again (a search for its GUID
// would find nothing).
func testLostOfferReplyItemTaken(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("q")
	producer := env.MemConn(t, zkmem.WithReconnectDelay(time.Second))
	p, c := queue.New(producer, dir), queue.New(env.Conn(t), dir)
	must(t, "first Offer", p.Offer(ctx, []byte("0")))
	if d, err := c.Take(ctx); err != nil || string(d) != "0" {
		t.Fatalf("Take = %q, %v", d, err)
	}
	taken := bt.Go(func() ([]byte, error) { return c.Take(ctx) })
	env.Settle()
	producer.Server().Control(producer.SessionID()).LoseNextReply(zkmem.OpMulti)
	must(t, "Offer with a lost reply", p.Offer(ctx, []byte("1")))
	if r := bt.Recv(t, ctx, taken); r.Err != nil || string(r.Val) != "1" {
		t.Fatalf("Take = %q, %v", r.Val, r.Err)
	}
	if n, err := c.Len(ctx); err != nil || n != 0 {
		t.Fatalf("Len = %d, %v: the item was offered again", n, err)
	}
}

// testLostRemoveReply: the reply of the multi that removes the head is
// lost (or the multi never arrives). The consumer still gets the head,
// once, and the next call gets the next item: nothing is skipped.
func testLostRemoveReply(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("q")
	conn := env.MemConn(t)
	q, other := queue.New(conn, dir), queue.New(env.Conn(t), dir)
	for _, s := range []string{"a", "b", "c", "d"} {
		must(t, "Offer", q.Offer(ctx, []byte(s)))
	}
	conn.Server().Control(conn.SessionID()).LoseNextReply(zkmem.OpMulti)
	if d, err := q.TryTake(ctx); err != nil || string(d) != "a" {
		t.Fatalf("Remove with a lost reply = %q, %v; want a", d, err)
	}
	conn.Server().Control(conn.SessionID()).DropNextRequest(zkmem.OpMulti)
	if d, err := q.Take(ctx); err != nil || string(d) != "b" {
		t.Fatalf("Take with a dropped request = %q, %v; want b", d, err)
	}
	if d, err := other.TryTake(ctx); err != nil || string(d) != "c" {
		t.Fatalf("other consumer = %q, %v; want c", d, err)
	}
	conn.Server().Control(conn.SessionID()).LoseNextReply(zkmem.OpMulti)
	if d, err := q.TryTake(ctx); err != nil || string(d) != "d" {
		t.Fatalf("TryTake with a lost reply = %q, %v; want d", d, err)
	}
	if n, err := q.Len(ctx); err != nil || n != 0 {
		t.Fatalf("Len = %d, %v", n, err)
	}
}

// testQueueChaos: producers and consumers whose requests keep losing
// replies; every item is consumed exactly once.
func testQueueChaos(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("q")
	const producers, perProducer, consumers = 2, 12, 3
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		consumed []string
		claimed  int
	)
	for p := 0; p < producers; p++ {
		conn := env.MemConn(t)
		conn.Server().Control(conn.SessionID()).SetFaultHook(bt.Flaky(3 + p))
		q := queue.New(conn, dir)
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
	for c := 0; c < consumers; c++ {
		conn := env.MemConn(t)
		conn.Server().Control(conn.SessionID()).SetFaultHook(bt.Flaky(4 + c))
		q := queue.New(conn, dir)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if claimed == producers*perProducer {
					mu.Unlock()
					return
				}
				claimed++
				mu.Unlock()
				d, err := q.Take(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				consumed = append(consumed, string(d))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	slices.Sort(consumed)
	if len(consumed) != producers*perProducer || len(slices.Compact(slices.Clone(consumed))) != len(consumed) {
		t.Fatalf("consumed %v: want each of %d items once", consumed, producers*perProducer)
	}
}

// testConsumerDiesMidItem: a consumer's session expires while it works on
// an item. The item is delivered again, to exactly one of the consumers
// waiting, and the dead consumer's Ack fails.
func testConsumerDiesMidItem(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("lq")
	aConn := env.MemConn(t)
	a := queue.NewLocking(aConn, dir)
	b, c := queue.NewLocking(env.Conn(t), dir), queue.NewLocking(env.Conn(t), dir)
	must(t, "Offer", b.Offer(ctx, []byte("job")))
	it, err := a.Take(ctx)
	must(t, "a.Take", err)
	bGot := bt.Go(func() (*queue.Item, error) { return b.Take(ctx) })
	cGot := bt.Go(func() (*queue.Item, error) { return c.Take(ctx) })
	env.Settle()
	bt.Pending(t, bGot, "b.Take while a holds the item")
	bt.Pending(t, cGot, "c.Take while a holds the item")
	aConn.Server().Control(aConn.SessionID()).Expire()
	env.Settle()
	var winner *queue.Item
	var loser <-chan bt.Result[*queue.Item]
	select {
	case r := <-bGot:
		must(t, "b.Take", r.Err)
		winner, loser = r.Val, cGot
	case r := <-cGot:
		must(t, "c.Take", r.Err)
		winner, loser = r.Val, bGot
	}
	if string(winner.Data()) != "job" {
		t.Fatalf("redelivered %q", winner.Data())
	}
	bt.Pending(t, loser, "the second consumer (the item was delivered twice)")
	if err := it.Ack(ctx); !errors.Is(err, queue.ErrClaimLost) || !errors.Is(err, zksim.ErrSessionExpired) {
		t.Fatalf("Ack by the dead consumer: %v, want ErrClaimLost and ErrSessionExpired", err)
	}
	must(t, "Ack", winner.Ack(ctx))
	env.Settle()
	bt.Pending(t, loser, "the second consumer after the ack")
	if n, err := b.Len(ctx); err != nil || n != 0 {
		t.Fatalf("Len = %d, %v", n, err)
	}
}

// testConsumerReconnects: a consumer's connection drops and comes back
// within the session timeout; its claim holds, nobody else gets the item,
// and its Ack works.
func testConsumerReconnects(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("lq")
	aConn := env.MemConn(t)
	a, b := queue.NewLocking(aConn, dir), queue.NewLocking(env.Conn(t), dir)
	must(t, "Offer", b.Offer(ctx, []byte("job")))
	it, err := a.Take(ctx)
	must(t, "a.Take", err)
	bGot := bt.Go(func() (*queue.Item, error) { return b.Take(ctx) })
	aConn.Server().Control(aConn.SessionID()).Disconnect()
	env.Settle()
	bt.Pending(t, bGot, "b.Take while a's session lives")
	must(t, "reconnect", aConn.Server().Control(aConn.SessionID()).Reconnect())
	must(t, "a.Ack", it.Ack(ctx))
	must(t, "Offer", a.Offer(ctx, []byte("next")))
	r := bt.Recv(t, ctx, bGot)
	must(t, "b.Take", r.Err)
	if string(r.Val.Data()) != "next" {
		t.Fatalf("b took %q, want next", r.Val.Data())
	}
	must(t, "b.Ack", r.Val.Ack(ctx))
}

// testLostClaimReply: the reply to the claim's create is lost; the
// consumer recognises its claim (owner and token) and gets the item, and
// no one else does.
func testLostClaimReply(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("lq")
	aConn := env.MemConn(t)
	a, b := queue.NewLocking(aConn, dir), queue.NewLocking(env.Conn(t), dir)
	must(t, "Offer", b.Offer(ctx, []byte("job")))
	must(t, "Offer", b.Offer(ctx, []byte("job2")))
	it, err := b.Take(ctx) // b claims job, so the claims directory exists
	must(t, "b.Take", err)
	aConn.Server().Control(aConn.SessionID()).LoseNextReply(zkmem.OpCreate)
	got, err := a.Take(ctx)
	must(t, "a.Take with a lost claim reply", err)
	if string(got.Data()) != "job2" {
		t.Fatalf("a took %q, want job2", got.Data())
	}
	if _, err := b.TryTake(ctx); !errors.Is(err, queue.ErrEmpty) {
		t.Fatalf("TryTake with every item claimed: %v, want ErrEmpty", err)
	}
	must(t, "a.Ack", got.Ack(ctx))
	must(t, "b.Ack", it.Ack(ctx))
	if claims := bt.Children(t, ctx, env.Conn(t), dir+"/claims"); len(claims) != 0 {
		t.Fatalf("claims left: %v", claims)
	}
}

// testCancelAfterLostClaimReply: the claim's create is applied but its
// reply is lost, and the Take is cancelled while the consumer waits for its
// connection to come back. Take deletes the claim before it returns: left
// behind, a claim of a live session would keep the item from every other
// consumer until that session ends.
func testCancelAfterLostClaimReply(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("lq")
	aConn := env.MemConn(t, zkmem.WithReconnectDelay(5*time.Second))
	a, b := queue.NewLocking(aConn, dir), queue.NewLocking(env.Conn(t), dir)
	must(t, "Offer", b.Offer(ctx, []byte("job")))
	must(t, "Offer", b.Offer(ctx, []byte("job2")))
	it, err := b.Take(ctx) // b claims job, so the claims directory exists
	must(t, "b.Take", err)
	aConn.Server().Control(aConn.SessionID()).LoseNextReply(zkmem.OpCreate)
	actx, cancel := context.WithCancel(ctx)
	done := bt.Go(func() (*queue.Item, error) { return a.Take(actx) })
	env.Settle() // a's claim of job2 is made, a waits for its connection
	if claims := bt.Children(t, ctx, env.Conn(t), dir+"/claims"); len(claims) != 2 {
		t.Fatalf("claims %v, want b's and a's", claims)
	}
	cancel()
	if r := bt.Recv(t, ctx, done); !errors.Is(r.Err, context.Canceled) {
		t.Fatalf("cancelled Take: %v, %v; want context.Canceled", r.Val, r.Err)
	}
	c := queue.NewLocking(env.Conn(t), dir)
	got, err := c.TryTake(ctx)
	if err != nil || string(got.Data()) != "job2" {
		t.Fatalf("TryTake after the cancelled Take: %v; want job2", err)
	}
	if st := aConn.State(); st != zksim.StateConnected {
		t.Fatalf("a's state %v, want connected (its session lives)", st)
	}
	must(t, "c.Ack", got.Ack(ctx))
	must(t, "b.Ack", it.Ack(ctx))
	if claims := bt.Children(t, ctx, env.Conn(t), dir+"/claims"); len(claims) != 0 {
		t.Fatalf("claims left: %v", claims)
	}
}

// testLostAckReply: the reply of the Ack multi is lost; Ack succeeds and
// the item is gone for everyone.
func testLostAckReply(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("lq")
	aConn := env.MemConn(t)
	a, b := queue.NewLocking(aConn, dir), queue.NewLocking(env.Conn(t), dir)
	must(t, "Offer", a.Offer(ctx, []byte("job")))
	it, err := a.Take(ctx)
	must(t, "Take", err)
	aConn.Server().Control(aConn.SessionID()).LoseNextReply(zkmem.OpMulti)
	must(t, "Ack with a lost reply", it.Ack(ctx))
	if _, err := b.TryTake(ctx); !errors.Is(err, queue.ErrEmpty) {
		t.Fatalf("TryTake after the ack: %v, want ErrEmpty", err)
	}
	if n, err := b.Len(ctx); err != nil || n != 0 {
		t.Fatalf("Len = %d, %v", n, err)
	}
}

// testLockingConsumersDie: consumers take items; two of them die (session
// expired) right after taking their first item, without acking. Every
// item is acknowledged exactly once by a surviving consumer.
func testLockingConsumersDie(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("lq")
	const items, consumers = 12, 4
	p := queue.NewLocking(env.Conn(t), dir)
	for i := 0; i < items; i++ {
		must(t, "Offer", p.Offer(ctx, fmt.Appendf(nil, "%02d", i)))
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		acked []string
	)
	for c := 0; c < consumers; c++ {
		conn := env.MemConn(t)
		conn.Server().Control(conn.SessionID()).SetFaultHook(bt.Flaky(5 + c))
		q := queue.NewLocking(conn, dir)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				it, err := q.TryTake(ctx)
				if errors.Is(err, queue.ErrEmpty) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				if c < 2 {
					conn.Server().Control(conn.SessionID()).Expire() // dies holding the item
					return
				}
				if err := it.Ack(ctx); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				acked = append(acked, string(it.Data()))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	// A survivor may have polled an empty queue while a dead consumer's
	// claim still stood; drain what is left.
	for {
		it, err := p.TryTake(ctx)
		if errors.Is(err, queue.ErrEmpty) {
			break
		}
		must(t, "drain", err)
		must(t, "drain ack", it.Ack(ctx))
		acked = append(acked, string(it.Data()))
	}
	slices.Sort(acked)
	if len(acked) != items || len(slices.Compact(slices.Clone(acked))) != items {
		t.Fatalf("acked %v, want each of %d items once", acked, items)
	}
}

// cancelAfterMulti is a Conn that cancels a context as the reply of its
// next multi arrives, once armed: a cancel that races with the reply.
type cancelAfterMulti struct {
	zksim.Conn
	cancel *context.CancelFunc
}

func (c cancelAfterMulti) Multi(ctx context.Context, ops ...zksim.Op) ([]zksim.OpResult, error) {
	res, err := c.Conn.Multi(ctx, ops...)
	if f := *c.cancel; f != nil {
		*c.cancel = nil
		f()
	}
	return res, err
}

// testAckCancelledItemDeleted: a third party deletes a claimed item; the
// consumer's Ack learns it from its multi (ErrClaimLost) and is cancelled
// just then. Its claim must not stay behind: the consumer, told the claim
// is lost, will not release it, and it would stay until the session ends.
func testAckCancelledItemDeleted(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("lq")
	var cancel context.CancelFunc
	q := queue.NewLocking(cancelAfterMulti{Conn: env.MemConn(t), cancel: &cancel}, dir)
	op := env.Conn(t)
	must(t, "Offer", q.Offer(ctx, []byte("job")))
	it, err := q.Take(ctx)
	must(t, "Take", err)
	names, _, err := op.Children(ctx, dir+"/items")
	must(t, "list by hand", err)
	for _, n := range names {
		if strings.HasPrefix(n, "_c_") {
			must(t, "delete the item by hand", op.Delete(ctx, dir+"/items/"+n, -1))
		}
	}
	actx, stop := context.WithCancel(ctx)
	defer stop()
	cancel = stop
	if err := it.Ack(actx); !errors.Is(err, queue.ErrClaimLost) {
		t.Fatalf("Ack of a deleted item: %v, want ErrClaimLost", err)
	}
	if claims, _, err := op.Children(ctx, dir+"/claims"); err != nil || len(claims) != 0 {
		t.Fatalf("claims after the Ack: %v, %v; want none", claims, err)
	}
}

// renewOnClaimDelete is a Conn that plays a client library renewing an
// expired session (as Curator's does) at the worst moment for a Take: a
// third party deletes the item just as the consumer claims it, and the
// consumer's session expires while it deletes that claim again; the Conn
// then goes on with a new session.
type renewOnClaimDelete struct {
	zksim.Conn            // the session it runs on now
	next       zksim.Conn // the session it renews to
	op         zksim.Conn // the third party
	items      string     // the items directory
	claims     string     // the claims directory
	renewed    bool
}

func (c *renewOnClaimDelete) Create(ctx context.Context, p string, data []byte, mode zksim.CreateMode, acl []zksim.ACL) (string, error) {
	if name, ok := strings.CutPrefix(p, c.claims+"/"); ok && !c.renewed {
		if err := c.op.Delete(ctx, c.items+"/"+name, -1); err != nil {
			return "", fmt.Errorf("third party's delete: %w", err)
		}
	}
	return c.Conn.Create(ctx, p, data, mode, acl)
}

func (c *renewOnClaimDelete) Delete(ctx context.Context, p string, version int32) error {
	if strings.HasPrefix(p, c.claims+"/") && !c.renewed {
		c.renewed = true
		c.Conn = c.next
		return zksim.ErrSessionExpired
	}
	return c.Conn.Delete(ctx, p, version)
}

// testTakeRenewedDuringCleanup: a Take whose session expires while it
// cleans up a claim on an item a third party deleted must end with
// ErrSessionExpired, not go on to claim the next item on the session a
// renewing Conn replaced it with (found by random exploration of the
// locking-queue machine on a sim.Renewing).
func testTakeRenewedDuringCleanup(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("lq")
	op := env.Conn(t)
	producer := queue.NewLocking(op, dir)
	must(t, "Offer", producer.Offer(ctx, []byte("a")))
	must(t, "Offer", producer.Offer(ctx, []byte("b")))
	conn := &renewOnClaimDelete{Conn: env.MemConn(t), next: env.MemConn(t), op: op, items: dir + "/items", claims: dir + "/claims"}
	q := queue.NewLocking(conn, dir)
	it, err := q.Take(ctx)
	if !conn.renewed {
		t.Fatalf("Take never deleted its claim (the scenario did not arise): item %v, err %v", it, err)
	}
	if !errors.Is(err, zksim.ErrSessionExpired) {
		t.Fatalf("Take across a renewal: item %v, err %v; want ErrSessionExpired", it, err)
	}
}

// swapConn is a Conn that a test moves to another session, as a client
// library that renews an expired session does.
type swapConn struct{ zksim.Conn }

// testAckOnRenewedSession: a consumer's session ends while it holds an
// item, another consumer claims the item, and the first consumer's Conn
// goes on with a new session. Its Ack must fail with ErrClaimLost (and
// ErrSessionExpired) and leave the other consumer's claim and the item
// alone: a multi deleting the claim's path would delete the other's claim
// (found by random exploration of the locking-queue machine on a
// sim.Renewing, there with the item deleted by a third party).
func testAckOnRenewedSession(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("lq")
	op := env.Conn(t)
	must(t, "Offer", queue.NewLocking(op, dir).Offer(ctx, []byte("job")))
	first := env.MemConn(t)
	conn := &swapConn{Conn: first}
	it, err := queue.NewLocking(conn, dir).Take(ctx)
	must(t, "Take", err)
	must(t, "close the first session", first.Close())
	other, err := queue.NewLocking(env.Conn(t), dir).Take(ctx)
	must(t, "Take of the other consumer", err)
	conn.Conn = env.MemConn(t) // renewed
	if err := it.Ack(ctx); !errors.Is(err, queue.ErrClaimLost) || !errors.Is(err, zksim.ErrSessionExpired) {
		t.Fatalf("Ack on a renewed session: %v; want ErrClaimLost and ErrSessionExpired", err)
	}
	if claims, _, err := op.Children(ctx, dir+"/claims"); err != nil || len(claims) != 1 {
		t.Fatalf("claims after the stale Ack: %v, %v; want the other consumer's", claims, err)
	}
	if err := it.Release(ctx); !errors.Is(err, zksim.ErrSessionExpired) {
		t.Fatalf("Release on a renewed session: %v; want ErrSessionExpired", err)
	}
	must(t, "Ack of the other consumer", other.Ack(ctx))
}

// authFailOnClaimDelete is a zkmem Conn at the worst moment for a TryTake
// to fail authentication: a third party deletes the item just as the
// consumer claims it, and the connection drops as the consumer deletes
// that claim again; the client then fails to authenticate when it
// reconnects (a rotated credential), as ZooKeeper's Java client does.
type authFailOnClaimDelete struct {
	*zkmem.Conn
	op     zksim.Conn // the third party
	items  string     // the items directory
	claims string     // the claims directory
	// deleted: the third party deleted the item; failed: the client
	// failed to authenticate.
	deleted, failed bool
}

func (c *authFailOnClaimDelete) Create(ctx context.Context, p string, data []byte, mode zksim.CreateMode, acl []zksim.ACL) (string, error) {
	if name, ok := strings.CutPrefix(p, c.claims+"/"); ok && !c.deleted {
		c.deleted = true
		if err := c.op.Delete(ctx, c.items+"/"+name, -1); err != nil {
			return "", fmt.Errorf("third party's delete: %v", err)
		}
	}
	return c.Conn.Create(ctx, p, data, mode, acl)
}

func (c *authFailOnClaimDelete) Delete(ctx context.Context, p string, version int32) error {
	if strings.HasPrefix(p, c.claims+"/") && !c.failed {
		c.failed = true
		c.Server().Control(c.SessionID()).Disconnect()
		if err := c.FailAuth(); err != nil {
			return fmt.Errorf("FailAuth: %v", err)
		}
	}
	return c.Conn.Delete(ctx, p, version)
}

// testTryTakeAuthFailsInCleanup: a TryTake whose only item a third party
// deleted as it claimed it, and whose client fails to authenticate while
// it deletes that claim again, must return ErrAuthFailed (package
// recipes: a client that failed to authenticate can do nothing more, and
// its calls say so), not report the queue empty as if its client could
// go on (found by random exploration of the locking-queue machine: "auth
// failure ignored").
func testTryTakeAuthFailsInCleanup(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("lq")
	op := env.Conn(t)
	must(t, "Offer", queue.NewLocking(op, dir).Offer(ctx, []byte("a")))
	conn := &authFailOnClaimDelete{Conn: env.MemConn(t), op: op, items: dir + "/items", claims: dir + "/claims"}
	it, err := queue.NewLocking(conn, dir).TryTake(ctx)
	if !conn.failed {
		t.Fatalf("TryTake never deleted its claim (the scenario did not arise): item %v, err %v", it, err)
	}
	if it != nil || !errors.Is(err, zksim.ErrAuthFailed) {
		t.Fatalf("TryTake whose client failed to authenticate in its cleanup: item %v, err %v; want ErrAuthFailed", it, err)
	}
}
