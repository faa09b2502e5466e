package sim

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/internal/pump"
)

// Renewing is a client library that silently replaces an expired session
// with a new one, as Apache Curator's does: when its client learns that
// the session expired, the World opens a new session (a new client, the
// next index) at that same step, and the Renewing goes on with it. Its
// SessionEvents report StateExpired, then StateConnected for the new
// session; SessionID changes; calls go to the new session. Code written
// against it must notice the expiry: a lock or a leadership held through
// the old session is gone, though every later call succeeds (the class of
// bug of CURATOR-696). Make one with World.Renewing; it implements
// zksim.Conn.
type Renewing struct {
	w *World

	mu     sync.Mutex
	cur    *Conn
	subs   []*pump.Pump
	closed bool // Close was called: an expiry learnt later is final
}

var (
	_ zksim.Conn       = (*Renewing)(nil)
	_ zksim.RandSource = (*Renewing)(nil)
)

// Renewing returns client i as a Renewing client. Call it from the World's
// goroutine, before the client's session expires.
func (w *World) Renewing(i int) *Renewing {
	r := &Renewing{w: w, cur: w.sessions[i].conn}
	w.sessions[i].renew = r
	return r
}

// Current returns the client the Renewing runs on now.
func (r *Renewing) Current() *Conn {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cur
}

// forward hands a session event of its current client to its subscribers.
func (r *Renewing) forward(ev zksim.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	live := r.subs[:0]
	for _, p := range r.subs {
		if p.Push(ev) {
			live = append(live, p)
		}
	}
	clear(r.subs[len(live):])
	r.subs = live
}

// renewTo opens the new session of the Renewing on s, whose session
// expired, and makes it the Renewing's current client; it returns nil if
// the World is closed, or if the Renewing was closed: a closed client
// library opens no session (Curator's CuratorFramework.close stops its
// connection handling for good). announceRenewal then tells the
// Renewing's subscribers.
func (w *World) renewTo(s *session) *Conn {
	r := s.renew
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return nil
	}
	c, err := w.Connect()
	if err != nil {
		if w.ens != nil && errors.Is(err, zksim.ErrConnectionLoss) {
			w.renewLater(s) // no member takes a new session now (an election)
		}
		return nil // closed
	}
	c.s.renew = r
	r.mu.Lock()
	r.cur = c
	r.mu.Unlock()
	return c
}

// renewLater tries renewTo again lagTick from now, as a library keeps
// trying to open its new session while no ensemble member takes one. A
// library whose process is paused (s's client, Pause) tries nothing until
// it resumes: a renewal meanwhile would leave the calls the process made
// on the old session held by a pause nobody ends, as the process goes on
// with the new one.
func (w *World) renewLater(s *session) {
	w.schedule(w.now+lagTick, &timed{kind: tEnsemble, fn: func() {
		if s.renew.Current() != s.conn {
			return
		}
		if s.paused {
			w.renewLater(s)
			return
		}
		if next := w.renewTo(s); next != nil {
			w.announceRenewal(s, next)
		}
	}})
}

// announceRenewal traces the renewal of s's Renewing to c and sends its
// subscribers StateConnected.
func (w *World) announceRenewal(s *session, c *Conn) {
	w.stepf("%s renewed: the client goes on with session %s", s.name, c.s.name)
	s.renew.forward(zksim.Event{Type: zksim.EventSession, State: zksim.StateConnected})
}

// SessionEvents implements zksim.Conn: the session events of every session
// the Renewing runs on, in order (StateExpired followed by StateConnected
// when it renews).
func (r *Renewing) SessionEvents(ctx context.Context) <-chan zksim.Event {
	p := pump.New(0, ctx.Done(), nil)
	r.mu.Lock()
	r.subs = append(r.subs, p)
	r.mu.Unlock()
	return p.Out()
}

// Create implements zksim.Conn.
func (r *Renewing) Create(ctx context.Context, path string, data []byte, mode zksim.CreateMode, acl []zksim.ACL) (string, error) {
	return r.Current().Create(ctx, path, data, mode, acl)
}

// CreateTTL implements zksim.Conn.
func (r *Renewing) CreateTTL(ctx context.Context, path string, data []byte, mode zksim.CreateMode, acl []zksim.ACL, ttl time.Duration) (string, error) {
	return r.Current().CreateTTL(ctx, path, data, mode, acl, ttl)
}

// Delete implements zksim.Conn.
func (r *Renewing) Delete(ctx context.Context, path string, version int32) error {
	return r.Current().Delete(ctx, path, version)
}

// Exists implements zksim.Conn.
func (r *Renewing) Exists(ctx context.Context, path string) (bool, *zksim.Stat, error) {
	return r.Current().Exists(ctx, path)
}

// ExistsW implements zksim.Conn.
func (r *Renewing) ExistsW(ctx context.Context, path string) (bool, *zksim.Stat, <-chan zksim.Event, error) {
	return r.Current().ExistsW(ctx, path)
}

// Get implements zksim.Conn.
func (r *Renewing) Get(ctx context.Context, path string) ([]byte, *zksim.Stat, error) {
	return r.Current().Get(ctx, path)
}

// GetW implements zksim.Conn.
func (r *Renewing) GetW(ctx context.Context, path string) ([]byte, *zksim.Stat, <-chan zksim.Event, error) {
	return r.Current().GetW(ctx, path)
}

// Set implements zksim.Conn.
func (r *Renewing) Set(ctx context.Context, path string, data []byte, version int32) (*zksim.Stat, error) {
	return r.Current().Set(ctx, path, data, version)
}

// Children implements zksim.Conn.
func (r *Renewing) Children(ctx context.Context, path string) ([]string, *zksim.Stat, error) {
	return r.Current().Children(ctx, path)
}

// ChildrenW implements zksim.Conn.
func (r *Renewing) ChildrenW(ctx context.Context, path string) ([]string, *zksim.Stat, <-chan zksim.Event, error) {
	return r.Current().ChildrenW(ctx, path)
}

// Multi implements zksim.Conn.
func (r *Renewing) Multi(ctx context.Context, ops ...zksim.Op) ([]zksim.OpResult, error) {
	return r.Current().Multi(ctx, ops...)
}

// Sync implements zksim.Conn.
func (r *Renewing) Sync(ctx context.Context, path string) (string, error) {
	return r.Current().Sync(ctx, path)
}

// GetACL implements zksim.Conn.
func (r *Renewing) GetACL(ctx context.Context, path string) ([]zksim.ACL, *zksim.Stat, error) {
	return r.Current().GetACL(ctx, path)
}

// SetACL implements zksim.Conn.
func (r *Renewing) SetACL(ctx context.Context, path string, acl []zksim.ACL, version int32) (*zksim.Stat, error) {
	return r.Current().SetACL(ctx, path, acl, version)
}

// AddAuth implements zksim.Conn (on the current session only).
func (r *Renewing) AddAuth(ctx context.Context, scheme string, auth []byte) error {
	return r.Current().AddAuth(ctx, scheme, auth)
}

// RandReader implements zksim.RandSource: the random stream of the client
// it runs on now, so that what a recipe draws (its GUIDs) replays with the
// World's seed.
func (r *Renewing) RandReader() io.Reader { return r.Current().RandReader() }

// SessionID implements zksim.Conn: the current session's.
func (r *Renewing) SessionID() int64 { return r.Current().SessionID() }

// SessionTimeout implements zksim.Conn.
func (r *Renewing) SessionTimeout() time.Duration { return r.Current().SessionTimeout() }

// State implements zksim.Conn: the current session's state, as its client
// knows it.
func (r *Renewing) State() zksim.State { return r.Current().State() }

// Close implements zksim.Conn: it closes the current session; its
// session-event channels close, and it renews no session after it, even
// if it learns later that the session it closed had expired.
func (r *Renewing) Close() error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	err := r.Current().Close()
	r.finish()
	return err
}

// finish closes the session-event channels.
func (r *Renewing) finish() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.subs {
		p.Finish(nil)
	}
	r.subs = nil
}
