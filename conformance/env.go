package conformance

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

// env is what a case works with: its test, a context bounding it, the
// backend, a fresh root node and a first session.
type env struct {
	t    *testing.T
	ctx  context.Context
	b    *Backend
	root string
	// c is the case's first session; it created root.
	c zksim.Conn
}

func newEnv(t *testing.T, b *Backend, root string) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), caseTimeout)
	t.Cleanup(cancel)
	e := &env{t: t, ctx: ctx, b: b, root: root}
	e.c = e.connect()
	e.create(e.c, root, nil, zksim.ModePersistent)
	return e
}

// facts returns the backend's server settings, defaults filled in.
func (e *env) facts() zkmem.Options { return e.b.Facts }

// connect opens a new session with the longest timeout the server allows,
// so that it survives the short disconnects some cases make. It is closed
// when the case ends.
func (e *env) connect() zksim.Conn {
	e.t.Helper()
	return e.connectTimeout(e.facts().MaxSessionTimeout)
}

// connectTimeout opens a new session asking for timeout, closed when the
// case ends.
func (e *env) connectTimeout(timeout time.Duration) zksim.Conn {
	e.t.Helper()
	c, err := e.b.Connect(e.ctx, timeout)
	require.NoError(e.t, err, "backend %s: connect", e.b.Name)
	require.NotNil(e.t, c, "backend %s: Connect returned a nil Conn", e.b.Name)
	e.t.Cleanup(func() { _ = c.Close() })
	return c
}

// p joins elems under the case root: p("a", "b") is root+"/a/b", p() the
// root itself.
// The elements are joined as they are, never cleaned ("." stays).
func (e *env) p(elems ...string) string {
	if len(elems) == 0 {
		return e.root
	}
	return e.root + "/" + strings.Join(elems, "/")
}

// create creates path with the open ACL and returns the created path.
func (e *env) create(c zksim.Conn, p string, data []byte, mode zksim.CreateMode) string {
	e.t.Helper()
	return e.createACL(c, p, data, mode, zksim.OpenACL())
}

func (e *env) createACL(c zksim.Conn, p string, data []byte, mode zksim.CreateMode, acl []zksim.ACL) string {
	e.t.Helper()
	got, err := c.Create(e.ctx, p, data, mode, acl)
	require.NoError(e.t, err, "create %s (%v)", p, mode)
	if !mode.IsSequential() {
		require.Equal(e.t, p, got, "create %s returned another path", p)
	}
	return got
}

// set replaces the data of path (any version).
func (e *env) set(c zksim.Conn, p string, data []byte) {
	e.t.Helper()
	_, err := c.Set(e.ctx, p, data, -1)
	require.NoError(e.t, err, "set %s", p)
}

// delete deletes path (any version).
func (e *env) delete(c zksim.Conn, p string) {
	e.t.Helper()
	require.NoError(e.t, c.Delete(e.ctx, p, -1), "delete %s", p)
}

// stat returns the Stat of path, which must exist.
func (e *env) stat(c zksim.Conn, p string) zksim.Stat {
	e.t.Helper()
	ok, st, err := c.Exists(e.ctx, p)
	require.NoError(e.t, err, "exists %s", p)
	require.True(e.t, ok, "exists %s: the node is missing", p)
	require.NotNil(e.t, st, "exists %s: nil Stat for a present node", p)
	return *st
}

// exists reports whether path exists, as seen by c.
func (e *env) exists(c zksim.Conn, p string) bool {
	e.t.Helper()
	ok, _, err := c.Exists(e.ctx, p)
	require.NoError(e.t, err, "exists %s", p)
	return ok
}

// children returns the sorted children of path.
func (e *env) children(c zksim.Conn, p string) []string {
	e.t.Helper()
	names, _, err := c.Children(e.ctx, p)
	require.NoError(e.t, err, "children %s", p)
	return sorted(names)
}

// data returns the data of path.
func (e *env) data(c zksim.Conn, p string) []byte {
	e.t.Helper()
	d, _, err := c.Get(e.ctx, p)
	require.NoError(e.t, err, "get %s", p)
	return d
}

// czxid creates a fresh persistent node under the root and returns its
// czxid: the zxid the next write got. Cases use it to see how many zxids
// the writes between two marks consumed.
func (e *env) czxid(c zksim.Conn) int64 {
	e.t.Helper()
	p := e.create(c, e.p("mark-"), nil, zksim.ModePersistentSequential)
	return e.stat(c, p).Czxid
}

// is fails the case unless errors.Is(err, want).
func (e *env) is(err, want error, what string, args ...any) {
	e.t.Helper()
	if !errors.Is(err, want) {
		e.t.Fatalf("%s: got error %v (code %d), want %v (code %d)",
			sprintf(what, args...), err, zksim.CodeOf(err), want, zksim.CodeOf(want))
	}
}

// poll calls cond every few milliseconds until it returns true, and fails
// the case if that does not happen within limit.
func (e *env) poll(limit time.Duration, what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("%s: not within %v", what, limit)
		}
		select {
		case <-e.ctx.Done():
			e.t.Fatalf("%s: %v", what, e.ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// sleep waits d, or fails the case when its context ends first.
func (e *env) sleep(d time.Duration) {
	e.t.Helper()
	select {
	case <-e.ctx.Done():
		e.t.Fatalf("sleep: %v", e.ctx.Err())
	case <-time.After(d):
	}
}
