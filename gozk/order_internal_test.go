package gozk

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zksim/zksim"
)

// These tests drive call with fake go-zookeeper calls (f functions that
// block on channels), inside a synctest bubble: synctest.Wait returns when
// every goroutine is blocked, so "f has not run" is checked without timing.

// fakeConn is a Conn with no go-zookeeper connection under it: enough for
// call, which only needs the bookkeeping.
func fakeConn() *Conn {
	return &Conn{
		closedCh:  make(chan struct{}),
		expiredCh: make(chan struct{}),
		state:     zksim.StateConnected,
		watches:   make(map[watchKey][]*forwarder),
	}
}

// finishFake marks c closed (or its session expired) as Close and onEvent
// do, without the go-zookeeper part.
func finishFake(c *Conn, expired bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.finished.Store(true)
	if expired {
		c.expired = true
		c.state = zksim.StateExpired
		close(c.expiredCh)
		return
	}
	c.closed = true
	c.state = zksim.StateClosed
	close(c.closedCh)
}

// blocker is a fake go-zookeeper call that blocks until released and
// records that it ran and when it returned.
type blocker struct {
	release  chan struct{}
	once     sync.Once
	ran      atomic.Bool
	returned atomic.Bool
	err      error // what f returns
}

// newBlocker returns a blocker that is released at the end of the test at
// the latest, so that a failing test does not leave f blocked.
func newBlocker(t *testing.T) *blocker {
	b := &blocker{release: make(chan struct{})}
	t.Cleanup(b.open)
	return b
}

func (b *blocker) open() { b.once.Do(func() { close(b.release) }) }

func (b *blocker) f() error {
	b.ran.Store(true)
	<-b.release
	b.returned.Store(true)
	return b.err
}

// abandonBlocked starts n calls whose f blocks, cancels their ctx while
// every f runs and checks that the calls returned context.Canceled.
func abandonBlocked(t *testing.T, c *Conn, n int) []*blocker {
	t.Helper()
	bs := make([]*blocker, n)
	done := make(chan error, n)
	ctx, cancel := context.WithCancel(context.Background())
	for i := range bs {
		bs[i] = newBlocker(t)
		go func() { done <- c.call(ctx, bs[i].f) }()
	}
	synctest.Wait()
	for i, b := range bs {
		if !b.ran.Load() {
			t.Fatalf("the f of call %d to be abandoned did not start", i)
		}
	}
	cancel()
	for range bs {
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("abandoned call returned %v, want context.Canceled", err)
		}
	}
	return bs
}

// probe is a later call: its f records whether the given abandoned fs had
// all returned when it started.
type probe struct {
	ran       atomic.Bool
	sawBefore atomic.Bool // every earlier f had returned when f started
	err       chan error
}

func startProbe(c *Conn, ctx context.Context, before ...*blocker) *probe {
	p := &probe{err: make(chan error, 1)}
	go func() {
		p.err <- c.call(ctx, func() error {
			all := true
			for _, b := range before {
				all = all && b.returned.Load()
			}
			p.sawBefore.Store(all)
			p.ran.Store(true)
			return zk.ErrNoNode
		})
	}()
	return p
}

func checkNoAbandoned(t *testing.T, c *Conn) {
	t.Helper()
	c.omu.Lock()
	n := len(c.abandoned)
	c.omu.Unlock()
	if got := c.nAbandoned.Load(); got != 0 || n != 0 {
		t.Fatalf("after every f returned: nAbandoned %d, %d registered; want 0", got, n)
	}
}

func TestOrderLaterCallWaitsForAbandonedCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := fakeConn()
		first := abandonBlocked(t, c, 1)[0]

		live, cancel := context.WithCancel(context.Background())
		defer cancel()
		probes := map[string]*probe{
			"cancellable ctx": startProbe(c, live, first),
			"ctx never done":  startProbe(c, context.Background(), first),
		}
		synctest.Wait()
		for name, p := range probes {
			if p.ran.Load() {
				t.Fatalf("%s: a later call ran its f while the abandoned call's f was still running", name)
			}
		}

		first.open()
		for name, p := range probes {
			if err := <-p.err; !errors.Is(err, zksim.ErrNoNode) {
				t.Fatalf("%s: later call returned %v, want its f's ErrNoNode", name, err)
			}
			if !p.sawBefore.Load() {
				t.Fatalf("%s: f started before the abandoned f returned", name)
			}
		}
		checkNoAbandoned(t, c)
		c.calls.Wait()
	})
}

func TestOrderLaterCallWaitsForEveryAbandonedCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := fakeConn()
		ab := abandonBlocked(t, c, 2)
		a, b := ab[0], ab[1]
		p := startProbe(c, t.Context(), a, b)

		b.open() // the later abandoned call is answered first
		synctest.Wait()
		if p.ran.Load() {
			t.Fatal("the later call ran while the first abandoned f was still running")
		}
		a.open()
		if err := <-p.err; !errors.Is(err, zksim.ErrNoNode) || !p.sawBefore.Load() {
			t.Fatalf("later call: %v, saw both abandoned fs returned: %v", err, p.sawBefore.Load())
		}
		checkNoAbandoned(t, c)
		c.calls.Wait()
	})
}

func TestOrderCancelWhileWaitingSendsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := fakeConn()
		first := abandonBlocked(t, c, 1)[0]

		cancelled, cancel := context.WithCancel(context.Background())
		byCancel := startProbe(c, cancelled, first)
		deadline, cancelDeadline := context.WithTimeout(context.Background(), time.Second)
		defer cancelDeadline()
		byDeadline := startProbe(c, deadline, first)
		synctest.Wait()
		cancel()
		if err := <-byCancel.err; !errors.Is(err, context.Canceled) {
			t.Fatalf("call cancelled while waiting returned %v, want context.Canceled", err)
		}
		// Virtual time passes once every goroutine is blocked.
		if err := <-byDeadline.err; !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("call whose deadline passed while waiting returned %v, want context.DeadlineExceeded", err)
		}
		if first.returned.Load() {
			t.Fatal("the abandoned f returned before it was released")
		}

		first.open()
		synctest.Wait()
		if byCancel.ran.Load() || byDeadline.ran.Load() {
			t.Fatalf("a call whose ctx ended while it waited ran its f (cancel %v, deadline %v)", byCancel.ran.Load(), byDeadline.ran.Load())
		}
		checkNoAbandoned(t, c)
		// Nothing is abandoned any more: a new call runs at once.
		if err := c.call(t.Context(), func() error { return nil }); err != nil {
			t.Fatalf("call after the abandoned f returned: %v", err)
		}
		c.calls.Wait()
	})
}

func TestOrderWaitEndsWhenConnFinishes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		expired bool
		want    error
	}{
		{"closed", false, zksim.ErrClosing},
		{"expired", true, zksim.ErrSessionExpired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := fakeConn()
				first := abandonBlocked(t, c, 1)[0]
				waiting := startProbe(c, t.Context(), first)
				forever := startProbe(c, context.Background(), first)
				synctest.Wait()
				finishFake(c, tc.expired)
				for _, p := range []*probe{waiting, forever} {
					if err := <-p.err; !errors.Is(err, tc.want) {
						t.Fatalf("waiting call returned %v, want %v", err, tc.want)
					}
				}
				first.open()
				c.calls.Wait() // what Close waits for
				if waiting.ran.Load() || forever.ran.Load() {
					t.Fatal("a call that waited on a finished Conn ran its f")
				}
				checkNoAbandoned(t, c)
			})
		})
	}
}

func TestOrderCallsNotAbandonedRunConcurrently(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := fakeConn()
		ctxs := []context.Context{context.Background(), t.Context(), t.Context(), t.Context()}
		bs := make([]*blocker, len(ctxs))
		errs := make(chan error, len(ctxs))
		for i, ctx := range ctxs {
			bs[i] = newBlocker(t)
			go func() { errs <- c.call(ctx, bs[i].f) }()
		}
		synctest.Wait()
		for i, b := range bs {
			if !b.ran.Load() {
				t.Fatalf("call %d did not start while the others were running", i)
			}
		}
		for _, b := range bs {
			b.open()
		}
		for range bs {
			if err := <-errs; err != nil {
				t.Fatalf("call returned %v", err)
			}
		}

		// A call already running when another is abandoned goes on: it is
		// not ordered after it, and is answered while the abandoned f runs.
		running := newBlocker(t)
		running.err = zk.ErrNodeExists
		runningErr := make(chan error, 1)
		go func() { runningErr <- c.call(t.Context(), running.f) }()
		synctest.Wait()
		abandoned := abandonBlocked(t, c, 1)[0]
		running.open()
		if err := <-runningErr; !errors.Is(err, zksim.ErrNodeExists) {
			t.Fatalf("call running beside the abandoned one returned %v, want ErrNodeExists", err)
		}
		if abandoned.returned.Load() {
			t.Fatal("the abandoned f returned before it was released")
		}
		abandoned.open()
		synctest.Wait()
		checkNoAbandoned(t, c)
		c.calls.Wait()
	})
}

// When f returns as its ctx ends, the call either returns f's answer (and
// nothing is abandoned) or ctx.Err() (and the abandoned call is released
// when f returns): nothing may stay registered either way.
func TestOrderAnswerRacingCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := fakeConn()
		var answered, cancelled int
		for range 200 {
			ctx, cancel := context.WithCancel(context.Background())
			err := c.call(ctx, func() error {
				cancel()
				return zk.ErrNoNode
			})
			switch {
			case errors.Is(err, zksim.ErrNoNode):
				answered++
			case errors.Is(err, context.Canceled):
				cancelled++
			default:
				t.Fatalf("call returned %v, want ErrNoNode or context.Canceled", err)
			}
			synctest.Wait()
			checkNoAbandoned(t, c)
		}
		t.Logf("answered %d, cancelled %d", answered, cancelled)
		c.calls.Wait()
	})
}

// Many goroutines make calls on one Conn; some give up on theirs while f
// still runs. Whenever a call's f starts, the f of every call that was
// abandoned before the call began must have returned.
func TestOrderConcurrentAbandonedCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := fakeConn()
		var (
			mu        sync.Mutex
			abandoned []*atomic.Bool // one per call that returned ctx.Err(): its f has returned
		)
		var violations, nAbandoned atomic.Int64
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(1, uint64(g)))
				for range 60 {
					mu.Lock()
					before := append([]*atomic.Bool(nil), abandoned...)
					mu.Unlock()
					sleep := time.Duration(r.IntN(50)) * time.Microsecond
					fReturned := new(atomic.Bool)
					ctx, cancel := context.WithCancel(context.Background())
					giveUp := r.IntN(3) == 0
					if r.IntN(4) == 0 {
						ctx = context.Background() // the path without a goroutine
						giveUp = false
					}
					err := c.call(ctx, func() error {
						for _, b := range before {
							if !b.Load() {
								violations.Add(1)
								break
							}
						}
						if giveUp {
							// ctx ends only here, so a ctx error means
							// that f was started and abandoned.
							cancel()
						}
						time.Sleep(sleep)
						fReturned.Store(true)
						return nil
					})
					cancel()
					switch {
					case errors.Is(err, context.Canceled):
						nAbandoned.Add(1)
						mu.Lock()
						abandoned = append(abandoned, fReturned)
						mu.Unlock()
					case err != nil:
						t.Errorf("call returned %v", err)
					}
				}
			})
		}
		wg.Wait()
		c.calls.Wait()
		checkNoAbandoned(t, c)
		if nAbandoned.Load() == 0 {
			t.Fatal("no call was abandoned: the test exercised nothing")
		}
		if v := violations.Load(); v != 0 {
			t.Fatalf("%d calls ran their f while an earlier abandoned f was still running (%d abandoned)", v, nAbandoned.Load())
		}
	})
}
