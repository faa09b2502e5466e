package retry_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes/internal/retry"
	"github.com/zksim/zksim/zkmem"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// timeout is the session timeout of every test session; longDown is a
// downtime far past it (the 1.5 session timeouts after which a cleanup
// once presumed its session expired, three times over).
const (
	timeout  = 10 * time.Second
	longDown = 3 * (timeout + timeout/2)
)

// cleanupEnv is one zkmem server, an observer session and a session that
// owns the ephemeral node /n, all in the current synctest bubble.
type cleanupEnv struct {
	srv      *zkmem.Server
	owner    *zkmem.Conn
	observer *zkmem.Conn
}

func newCleanupEnv(t *testing.T) *cleanupEnv {
	t.Helper()
	srv := zkmem.NewServer(zkmem.Options{})
	t.Cleanup(srv.Close)
	connect := func() *zkmem.Conn {
		// A fault that breaks the connection leaves it down until the
		// test reconnects (or far longer than any test waits).
		c, err := srv.Connect(zkmem.WithSessionTimeout(timeout), zkmem.WithReconnectDelay(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	e := &cleanupEnv{srv: srv, owner: connect(), observer: connect()}
	if got := e.owner.SessionTimeout(); got != timeout {
		t.Fatalf("session timeout %v, want %v", got, timeout)
	}
	if _, err := e.owner.Create(t.Context(), "/n", nil, zksim.ModeEphemeral, zksim.OpenACL()); err != nil {
		t.Fatal(err)
	}
	return e
}

// exists reports whether /n exists, as the observer sees it.
func (e *cleanupEnv) exists(t *testing.T) bool {
	t.Helper()
	ok, _, err := e.observer.Exists(t.Context(), "/n")
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// cleanup is a running cleanup: the delete of /n under a CleanupContext
// whose parent is already cancelled, as after a cancelled call.
type cleanup struct {
	cancel context.CancelFunc
	start  time.Time
	done   chan struct{}
	err    error
	took   time.Duration
}

func (e *cleanupEnv) startCleanup(t *testing.T) *cleanup {
	parent, cancelParent := context.WithCancel(context.Background())
	cancelParent()
	ctx, cancel := retry.CleanupContext(parent)
	c := &cleanup{cancel: cancel, start: time.Now(), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		c.err = retry.Do(ctx, e.owner, func() error { return e.owner.Delete(ctx, "/n", -1) })
		c.took = time.Since(c.start)
	}()
	// A test that fails early must not leave it running in the bubble.
	t.Cleanup(func() {
		c.cancel()
		<-c.done
	})
	return c
}

// running reports whether the cleanup is still going, once everything that
// can happen now has happened.
func (c *cleanup) running() bool {
	synctest.Wait()
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// wait waits for the cleanup to end and returns its error.
func (c *cleanup) wait() error {
	<-c.done
	return c.err
}

// TestCleanupOutlastsFlappingConnection: the connection flaps, down for
// nine tenths of the session timeout each time with an instant of
// connection between: several session timeouts in total while the
// session lives. The cleanup goes on and deletes the node when the
// connection comes back for good.
func TestCleanupOutlastsFlappingConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newCleanupEnv(t)
		e.owner.Server().Control(e.owner.SessionID()).Disconnect()
		c := e.startCleanup(t)
		// A request sent in an instant of connection is lost, so that the
		// cleanup cannot end early by luck.
		e.owner.Server().Control(e.owner.SessionID()).SetFaultHook(func(zkmem.Request, zkmem.ConnFault) zkmem.ConnFault { return zkmem.DropRequest })
		for range 7 {
			time.Sleep(timeout * 9 / 10)
			if !c.running() {
				t.Fatalf("cleanup ended after %v of a flapping connection: %v", c.took, c.err)
			}
			// Connected for no time at all: the cleanup hears of it only
			// after the connection is down again.
			if err := e.owner.Server().Control(e.owner.SessionID()).Reconnect(); err != nil {
				t.Fatalf("reconnect: %v", err)
			}
			e.owner.Server().Control(e.owner.SessionID()).Disconnect()
		}
		if !e.exists(t) {
			t.Fatal("the session died while it flapped")
		}
		time.Sleep(timeout * 9 / 10)
		if !c.running() {
			t.Fatalf("cleanup ended after %v: %v", c.took, c.err)
		}
		e.owner.Server().Control(e.owner.SessionID()).SetFaultHook(nil)
		if err := e.owner.Server().Control(e.owner.SessionID()).Reconnect(); err != nil {
			t.Fatalf("reconnect: %v", err)
		}
		if err := c.wait(); err != nil {
			t.Fatalf("cleanup: %v", err)
		}
		if e.exists(t) {
			t.Fatal("node still there after the cleanup")
		}
	})
}

// TestCleanupOutlastsSlowRetries: each time the connection comes back the
// delete is lost with it (the request never reaches the server), so the
// cleanup keeps retrying for several session timeouts; it ends
// once a delete goes through.
func TestCleanupOutlastsSlowRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newCleanupEnv(t)
		e.owner.Server().Control(e.owner.SessionID()).Disconnect()
		c := e.startCleanup(t)
		for range 5 {
			// Down for 0.8 + 0.1 session timeouts: the session lives.
			time.Sleep(timeout * 8 / 10)
			e.owner.Server().Control(e.owner.SessionID()).DropNextRequest(zkmem.OpDelete)
			if err := e.owner.Server().Control(e.owner.SessionID()).Reconnect(); err != nil {
				t.Fatalf("reconnect: %v", err)
			}
			// The cleanup retries within its backoff (at most half a
			// second); the dropped delete breaks the connection again.
			time.Sleep(time.Second)
			if !c.running() {
				t.Fatalf("cleanup ended after %v: %v", c.took, c.err)
			}
			if st := e.owner.State(); st != zksim.StateDisconnected {
				t.Fatalf("state %v after the dropped delete, want disconnected", st)
			}
			e.owner.Server().Control(e.owner.SessionID()).Disconnect() // cancels the redial
		}
		if err := e.owner.Server().Control(e.owner.SessionID()).Reconnect(); err != nil {
			t.Fatalf("reconnect: %v", err)
		}
		if err := c.wait(); err != nil {
			t.Fatalf("cleanup: %v", err)
		}
		if e.exists(t) {
			t.Fatal("node still there after the cleanup")
		}
	})
}

// TestCleanupWaitsToHearOfTheExpiry: a connection that stays down never
// ends the cleanup, however long: the server has expired the session (and
// deleted the node), but the cleanup ends only when the client hears of
// it, at its reconnection.
func TestCleanupWaitsToHearOfTheExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newCleanupEnv(t)
		e.owner.Server().Control(e.owner.SessionID()).Disconnect()
		c := e.startCleanup(t)
		time.Sleep(longDown)
		if !c.running() {
			t.Fatalf("cleanup ended after %v of downtime: %v", c.took, c.err)
		}
		if e.exists(t) {
			t.Fatal("the session outlived its timeout on a standalone server")
		}
		if err := e.owner.Server().Control(e.owner.SessionID()).Reconnect(); !errors.Is(err, zksim.ErrSessionExpired) {
			t.Fatalf("reconnect: %v, want ErrSessionExpired", err)
		}
		if err := c.wait(); !errors.Is(err, zksim.ErrSessionExpired) || !retry.Final(err) {
			t.Fatalf("cleanup: %v, want ErrSessionExpired (Final)", err)
		}
		if c.took != longDown {
			t.Fatalf("cleanup ended after %v, want %v", c.took, longDown)
		}
	})
}

// TestCleanupOutlastsAnEnsembleWithoutALeader: on an ensemble no session
// expires while there is no leader, and the next leader gives every
// session a fresh timeout (ZooKeeper 3.8). A cleanup cut off from the
// ensemble for far longer than its session timeout therefore goes on, and
// deletes the node of its live session once a leader serves it again; a
// cleanup that gave up after some downtime would leave the node behind for
// the session's life.
func TestCleanupOutlastsAnEnsembleWithoutALeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		ens := zkmem.NewEnsemble(3, zkmem.EnsembleOptions{})
		t.Cleanup(ens.Close)
		connect := func() *zkmem.Conn {
			c, err := ens.Connect(zkmem.WithMembers(0, 1, 2), zkmem.WithSessionTimeout(timeout))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = c.Close() })
			return c
		}
		owner, observer := connect(), connect()
		if _, err := owner.Create(ctx, "/n", nil, zksim.ModeEphemeral, zksim.OpenACL()); err != nil {
			t.Fatal(err)
		}
		ens.Crash(ens.Leader()) // an election starts: no member serves
		synctest.Wait()
		if st := owner.State(); st == zksim.StateConnected {
			t.Fatalf("owner %v with no leader", st)
		}
		parent, cancelParent := context.WithCancel(ctx)
		cancelParent()
		cctx, cancel := retry.CleanupContext(parent)
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- retry.Do(cctx, owner, func() error { return owner.Delete(cctx, "/n", -1) }) }()
		time.Sleep(longDown)
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("cleanup ended after %v with no leader, its session alive: %v", longDown, err)
		default:
		}
		if _, err := ens.Elect(); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatalf("cleanup: %v", err)
		}
		if ok, _, err := observer.Exists(ctx, "/n"); err != nil || ok {
			t.Fatalf("/n exists %v (%v) after the cleanup", ok, err)
		}
	})
}

// TestCleanupEndsOnExpiry: a session that expired while the connection was
// down ends the cleanup as soon as the client learns it, before the
// downtime limit.
func TestCleanupEndsOnExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newCleanupEnv(t)
		e.owner.Server().Control(e.owner.SessionID()).Disconnect()
		c := e.startCleanup(t)
		time.Sleep(timeout + time.Second) // the server expires the session
		if !c.running() {
			t.Fatalf("cleanup ended after %v: %v", c.took, c.err)
		}
		if err := e.owner.Server().Control(e.owner.SessionID()).Reconnect(); !errors.Is(err, zksim.ErrSessionExpired) {
			t.Fatalf("reconnect: %v, want ErrSessionExpired", err)
		}
		if err := c.wait(); !errors.Is(err, zksim.ErrSessionExpired) {
			t.Fatalf("cleanup: %v, want ErrSessionExpired", err)
		}
		if c.took != timeout+time.Second {
			t.Fatalf("cleanup ended after %v, want %v", c.took, timeout+time.Second)
		}
	})
}

// TestCleanupEndsOnClose: closing the Conn ends the cleanup.
func TestCleanupEndsOnClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newCleanupEnv(t)
		e.owner.Server().Control(e.owner.SessionID()).Disconnect()
		c := e.startCleanup(t)
		time.Sleep(timeout / 2)
		if err := e.owner.Close(); err != nil {
			t.Fatal(err)
		}
		if err := c.wait(); !retry.Final(err) {
			t.Fatalf("cleanup: %v, want a Final error", err)
		}
	})
}

// TestCleanupCancel: the cancel function of a CleanupContext ends a
// waiting cleanup at once, and leaves nothing running (the bubble would
// not end otherwise, and goleak checks the rest).
func TestCleanupCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newCleanupEnv(t)
		e.owner.Server().Control(e.owner.SessionID()).Disconnect()
		c := e.startCleanup(t)
		time.Sleep(timeout / 2)
		if !c.running() {
			t.Fatalf("cleanup ended after %v: %v", c.took, c.err)
		}
		c.cancel()
		if err := c.wait(); !errors.Is(err, context.Canceled) {
			t.Fatalf("cleanup: %v, want context.Canceled", err)
		}
		if c.took != timeout/2 {
			t.Fatalf("cleanup ended after %v, want %v", c.took, timeout/2)
		}
	})
}

// TestCleanupContextKeepsValuesNotCancellation: the cleanup context keeps
// the parent's values, not its cancellation or deadline, and has no
// deadline of its own.
func TestCleanupContextKeepsValuesNotCancellation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		type key struct{}
		parent, cancel := context.WithTimeout(context.WithValue(t.Context(), key{}, "v"), time.Second)
		ctx, cancelCleanup := retry.CleanupContext(parent)
		defer cancelCleanup()
		cancel()
		if ctx.Err() != nil {
			t.Fatalf("cleanup context ended with its parent: %v", ctx.Err())
		}
		if _, ok := ctx.Deadline(); ok {
			t.Fatal("cleanup context has a deadline")
		}
		if ctx.Value(key{}) != "v" {
			t.Fatal("cleanup context lost the parent's values")
		}
		cancelCleanup()
		if ctx.Err() == nil {
			t.Fatal("cancel did not end the cleanup context")
		}
	})
}

// TestWaitConnectedUnboundedOutsideCleanup: without a CleanupContext too,
// WaitConnected has no downtime limit; it waits until the client learns
// of the expiry.
func TestWaitConnectedUnboundedOutsideCleanup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newCleanupEnv(t)
		e.owner.Server().Control(e.owner.SessionID()).Disconnect()
		done := make(chan error, 1)
		go func() { done <- retry.WaitConnected(t.Context(), e.owner) }()
		time.Sleep(longDown)
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("WaitConnected ended: %v", err)
		default:
		}
		if err := e.owner.Server().Control(e.owner.SessionID()).Reconnect(); !errors.Is(err, zksim.ErrSessionExpired) {
			t.Fatalf("reconnect: %v, want ErrSessionExpired", err)
		}
		if err := <-done; !errors.Is(err, zksim.ErrSessionExpired) {
			t.Fatalf("WaitConnected: %v, want ErrSessionExpired", err)
		}
	})
}
