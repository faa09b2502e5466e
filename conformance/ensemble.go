package conformance

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zktest"
)

// ensembleCaseTimeout bounds one ensemble case: member restarts and
// elections take seconds on a real ensemble.
const ensembleCaseTimeout = 90 * time.Second

// ensembleCase is one named behaviour check on an ensemble.
type ensembleCase struct {
	name string
	run  func(e *ensEnv)
}

// EnsembleCaseNames returns the names of the ensemble cases,
// "ensemble/case", in the order RunEnsemble runs them.
func EnsembleCaseNames() []string {
	var names []string
	for _, c := range ensembleCases() {
		names = append(names, "ensemble/"+c.name)
	}
	return names
}

// RunEnsemble runs the ensemble cases against ens, each as a subtest
// ensemble/case of t, one after another. ens must have at least 3
// members. Each case works under its own root,
// /ensemble-<run id>/<case>, and leaves the ensemble as it found it (every
// member running, in the quorum, caught up), restoring it at cleanup when
// it fails half-way.
func RunEnsemble(t *testing.T, ens zktest.Ensemble) {
	t.Helper()
	if ens.Size() < 3 {
		t.Fatalf("conformance: ensemble %s has %d members; the ensemble cases need 3", ens.Name(), ens.Size())
	}
	suiteRoot := "/ensemble-" + randomID()
	func() {
		ctx, cancel := context.WithTimeout(t.Context(), ensembleCaseTimeout)
		defer cancel()
		leader, err := ens.Leader(ctx)
		require.NoError(t, err, "ensemble %s: leader", ens.Name())
		c, err := ens.Connect(ctx, ens.Facts().MaxSessionTimeout, leader)
		require.NoError(t, err, "ensemble %s: connect", ens.Name())
		defer c.Close()
		_, err = c.Create(ctx, suiteRoot, nil, zksim.ModePersistent, zksim.OpenACL())
		require.NoError(t, err, "ensemble %s: create the suite root %s", ens.Name(), suiteRoot)
	}()
	t.Run("ensemble", func(t *testing.T) {
		for _, c := range ensembleCases() {
			t.Run(c.name, func(t *testing.T) {
				e := newEnsEnv(t, ens, suiteRoot+"/"+c.name)
				c.run(e)
			})
		}
	})
}

// ensEnv is what an ensemble case works with: its test and context, the
// ensemble, a fresh root, the leader and two followers as they were when
// the case began, and a session on the leader that created the root.
type ensEnv struct {
	t    *testing.T
	ctx  context.Context
	ens  zktest.Ensemble
	root string

	leader    int
	followers []int // in member order
	// admin is a session on the leader, for setting up and checking.
	admin zksim.Conn
}

func newEnsEnv(t *testing.T, ens zktest.Ensemble, root string) *ensEnv {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), ensembleCaseTimeout)
	t.Cleanup(cancel)
	e := &ensEnv{t: t, ctx: ctx, ens: ens, root: root}
	leader, err := ens.Leader(ctx)
	require.NoError(t, err, "ensemble %s: leader", ens.Name())
	e.leader = leader
	for i := range ens.Size() {
		if i != leader {
			e.followers = append(e.followers, i)
		}
	}
	e.admin = e.connect(leader)
	_, err = e.admin.Create(ctx, root, nil, zksim.ModePersistent, zksim.OpenACL())
	require.NoError(t, err, "create the case root %s", root)
	return e
}

// p joins elems under the case root.
func (e *ensEnv) p(elems ...string) string {
	out := e.root
	for _, el := range elems {
		out += "/" + el
	}
	return out
}

// connect opens a session with the longest timeout the members allow
// (so it outlives elections), on members in order; it is closed when the
// case ends.
func (e *ensEnv) connect(members ...int) zksim.Conn {
	e.t.Helper()
	c, err := e.ens.Connect(e.ctx, e.ens.Facts().MaxSessionTimeout, members...)
	require.NoError(e.t, err, "ensemble %s: connect to members %v", e.ens.Name(), members)
	e.t.Cleanup(func() { _ = c.Close() })
	require.Equal(e.t, members[0], e.ens.MemberOf(c), "a new session is on the first member of its list")
	return c
}

// cleanupCtx bounds the restoring work done at cleanup, after the case's
// own context may have ended.
func (e *ensEnv) cleanupCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), ensembleCaseTimeout)
}

// lag makes member i lag, and catches it up at cleanup unless the case
// did (catchUp).
func (e *ensEnv) lag(i int) (catchUp func()) {
	e.t.Helper()
	e.control(e.ens.Lag(e.ctx, i), "lag member %d", i)
	done := false
	catchUp = func() {
		e.t.Helper()
		if done {
			return
		}
		done = true
		require.NoError(e.t, e.ens.CatchUp(e.ctx, i), "catch up member %d", i)
	}
	e.t.Cleanup(func() {
		if !done {
			ctx, cancel := e.cleanupCtx()
			defer cancel()
			_ = e.ens.CatchUp(ctx, i)
		}
	})
	return catchUp
}

// crash crashes member i, and restarts it at cleanup unless the case did
// (restart).
func (e *ensEnv) crash(i int) (restart func()) {
	e.t.Helper()
	e.control(e.ens.Crash(e.ctx, i), "crash member %d", i)
	done := false
	restart = func() {
		e.t.Helper()
		if done {
			return
		}
		done = true
		require.NoError(e.t, e.ens.Restart(e.ctx, i), "restart member %d", i)
	}
	e.t.Cleanup(func() {
		if !done {
			ctx, cancel := e.cleanupCtx()
			defer cancel()
			if err := e.ens.Restart(ctx, i); err != nil {
				e.t.Errorf("cleanup: restart member %d: %v", i, err)
			}
		}
	})
	return restart
}

// isolate isolates member i, and heals it at cleanup unless the case did
// (heal).
func (e *ensEnv) isolate(i int) (heal func()) {
	e.t.Helper()
	done := false
	heal = func() {
		e.t.Helper()
		if done {
			return
		}
		done = true
		require.NoError(e.t, e.ens.Heal(e.ctx, i), "heal member %d", i)
	}
	e.t.Cleanup(func() {
		if !done {
			ctx, cancel := e.cleanupCtx()
			defer cancel()
			if err := e.ens.Heal(ctx, i); err != nil {
				e.t.Errorf("cleanup: heal member %d: %v", i, err)
			}
		}
	})
	if err := e.ens.Isolate(e.ctx, i); errors.Is(err, errors.ErrUnsupported) {
		done = true // nothing to heal
		e.t.Skipf("ensemble %s cannot isolate a member: %v", e.ens.Name(), err)
	} else {
		require.NoError(e.t, err, "isolate member %d", i)
	}
	return heal
}

// control fails the case on err, or skips it when err wraps
// errors.ErrUnsupported: the backend cannot do what the case needs.
func (e *ensEnv) control(err error, what string, args ...any) {
	e.t.Helper()
	if errors.Is(err, errors.ErrUnsupported) {
		e.t.Skipf("ensemble %s cannot %s: %v", e.ens.Name(), sprintf(what, args...), err)
	}
	require.NoError(e.t, err, sprintf(what, args...))
}

// awaitMember waits until c is connected to member want, with its session
// sessionID.
func (e *ensEnv) awaitMember(c zksim.Conn, want int, sessionID int64) {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for e.ens.MemberOf(c) != want {
		if time.Now().After(deadline) {
			e.t.Fatalf("the session is on member %d (state %v), not %d, after 30s", e.ens.MemberOf(c), c.State(), want)
		}
		select {
		case <-e.ctx.Done():
			e.t.Fatalf("waiting for the session to reach member %d: %v", want, e.ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
	require.Equal(e.t, sessionID, c.SessionID(), "the session moved to member %d under another id", want)
	require.Equal(e.t, zksim.StateConnected, c.State())
}

// data returns the data of p as c sees it.
func (e *ensEnv) data(c zksim.Conn, p string) []byte {
	e.t.Helper()
	d, _, err := c.Get(e.ctx, p)
	require.NoError(e.t, err, "get %s", p)
	return d
}

// exists reports whether p exists as c sees it.
func (e *ensEnv) exists(c zksim.Conn, p string) bool {
	e.t.Helper()
	ok, _, err := c.Exists(e.ctx, p)
	require.NoError(e.t, err, "exists %s", p)
	return ok
}

// create creates p (open ACL) with data and mode.
func (e *ensEnv) create(c zksim.Conn, p string, data []byte, mode zksim.CreateMode) {
	e.t.Helper()
	got, err := c.Create(e.ctx, p, data, mode, zksim.OpenACL())
	require.NoError(e.t, err, "create %s", p)
	require.Equal(e.t, p, got)
}

// pending runs f in a goroutine and returns a channel that receives its
// error once it returns.
func pending(f func() error) <-chan error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	return done
}

// stillPending fails the case if done has a result within d: the call it
// stands for must not have been answered yet.
func (e *ensEnv) stillPending(done <-chan error, d time.Duration, what string) {
	e.t.Helper()
	select {
	case err := <-done:
		e.t.Fatalf("%s returned (error %v) while it must wait", what, err)
	case <-time.After(d):
	}
}

// answered waits for done's result and returns it.
func (e *ensEnv) answered(done <-chan error, what string) error {
	e.t.Helper()
	select {
	case err := <-done:
		return err
	case <-e.ctx.Done():
		e.t.Fatalf("%s: %v", what, e.ctx.Err())
		return nil
	}
}
