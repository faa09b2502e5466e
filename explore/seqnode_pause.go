package explore

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/sim"
)

// firstPauseConn is a client's Conn for one recipe call, checking the
// pause after the call's first connection loss on the virtual clock:
// none. recipes/internal/retry documents it (Pause: "from the second loss
// in a row on it also backs off"; the first pause only waits for the
// connection), and so does retrycheck.go's backoff(1). timedConn checks a
// pause only where a request is repeated as it was; a recipe that does
// something else first (a protected create lists its directory for its
// GUID before it creates again) escapes it. Here the first loss arms the
// check whatever comes next: once the recipe has seen the Conn connected
// again (State, which retry.WaitConnected reads), its next request must
// go out at that same instant. Later losses of the call are not checked
// (a recipe may count losses across requests and back off after them).
type firstPauseConn struct {
	*sim.Conn
	w    *world
	idx  int    // the client's index
	what string // the call, for the violation

	mu sync.Mutex
	// gated: only the requests of calls made through call are checked
	// (the Conn serves other goroutines at other times); on: one is under
	// way.
	gated, on bool
	armed     bool          // the first loss came, the next request not yet
	done      bool          // the first loss has been followed by a request
	seenAt    time.Duration // when the recipe saw the Conn connected since, -1 if not
}

var _ zksim.Conn = (*firstPauseConn)(nil)

func newFirstPauseConn(w *world, c *client, what string) *firstPauseConn {
	return &firstPauseConn{Conn: c.conn, w: w, idx: c.idx, what: what, seenAt: -1}
}

// call runs one recipe call on a Conn that is shared with other
// goroutines at other times (a SingleNode's Campaign; its hold reads
// through the same Conn once it leads): only the call's requests are
// checked, and its first loss is its own.
func (f *firstPauseConn) call(run func() error) error {
	f.mu.Lock()
	f.gated, f.on, f.armed, f.done = true, true, false, false
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.on, f.armed = false, false
		f.mu.Unlock()
	}()
	return run()
}

// State implements zksim.Conn, noting when the recipe learns that the
// connection is back.
func (f *firstPauseConn) State() zksim.State {
	st := f.Conn.State()
	if st == zksim.StateConnected {
		f.mu.Lock()
		if f.armed && f.seenAt < 0 && (f.on || !f.gated) {
			f.seenAt = f.w.sw.Now()
		}
		f.mu.Unlock()
	}
	return st
}

// begin checks a request about to go out.
func (f *firstPauseConn) begin(op string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.armed || (f.gated && !f.on) {
		return
	}
	f.armed, f.done = false, true
	if now := f.w.sw.Now(); f.seenAt >= 0 && now > f.seenAt {
		f.w.violate("retried too late", "p%d's %s sent %s %v after it saw the connection back from its first connection loss; the first pause has no backoff", f.idx, f.what, op, now-f.seenAt)
	}
}

// end arms the check at the call's first connection loss.
func (f *firstPauseConn) end(err error) {
	if !errors.Is(err, zksim.ErrConnectionLoss) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.done && !f.armed && (f.on || !f.gated) {
		f.armed, f.seenAt = true, -1
	}
}

// Create implements zksim.Conn.
func (f *firstPauseConn) Create(ctx context.Context, path string, data []byte, mode zksim.CreateMode, acl []zksim.ACL) (string, error) {
	f.begin("create " + path)
	p, err := f.Conn.Create(ctx, path, data, mode, acl)
	f.end(err)
	return p, err
}

// Children implements zksim.Conn.
func (f *firstPauseConn) Children(ctx context.Context, path string) ([]string, *zksim.Stat, error) {
	f.begin("children " + path)
	ch, st, err := f.Conn.Children(ctx, path)
	f.end(err)
	return ch, st, err
}

// Delete implements zksim.Conn.
func (f *firstPauseConn) Delete(ctx context.Context, path string, version int32) error {
	f.begin("delete " + path)
	err := f.Conn.Delete(ctx, path, version)
	f.end(err)
	return err
}

// Exists implements zksim.Conn.
func (f *firstPauseConn) Exists(ctx context.Context, path string) (bool, *zksim.Stat, error) {
	f.begin("exists " + path)
	ok, st, err := f.Conn.Exists(ctx, path)
	f.end(err)
	return ok, st, err
}
