package election

import (
	"context"
	"errors"
	"sync"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/internal/hold"
	"github.com/zksim/zksim/recipes/internal/retry"
	"github.com/zksim/zksim/recipes/internal/seqnode"
)

// SingleNode is the naive election kept only for comparison and
// benchmarks: whoever creates the ephemeral node at path leads; everyone
// else watches that one node and races to create it when it goes. Every
// change wakes every candidate (the herd effect), and the next leader is
// whoever wins the race, not the longest waiter. Use New for real work.
//
// It still handles faults correctly: a create whose reply was lost is
// recognised by the node's EphemeralOwner, and leadership states follow
// the connection as for Election. Because ownership is told by session,
// use at most one SingleNode per Conn and path. One fault it cannot
// handle: a third party that deletes the leader's node while the leader
// resigns. Resign checks that the node is its own and then deletes it;
// ZooKeeper has no delete conditional on the owner, so if the node was
// deleted and the next leader created its own in between, Resign deletes
// the next leader's node.
type SingleNode struct {
	conn zksim.Conn
	path string
	cfg  config

	mu          sync.Mutex
	campaigning bool
	tracker     *hold.Tracker
	token       int64
	leading     bool // our node has not been deleted by Resign
}

// NewSingleNode returns a candidate for the single-node election at path.
func NewSingleNode(conn zksim.Conn, path string, opts ...Option) *SingleNode {
	return &SingleNode{conn: conn, path: path, cfg: newConfig(opts)}
}

// Campaign blocks until we lead (we created the node at path), ctx is
// done, or the session can no longer act. On error it deletes the node if
// a create of ours made it (it syncs first, so that an ensemble member
// behind that create does not hide it). After a Lost leadership it first deletes our
// node if it is still there (waiting out connection losses even after ctx
// is done, as a cleanup does), so that a new leadership has a new node
// and a larger Token.
func (s *SingleNode) Campaign(ctx context.Context, value []byte) (err error) {
	s.mu.Lock()
	if s.campaigning || (s.tracker != nil && !s.tracker.State().Final()) {
		s.mu.Unlock()
		return ErrCampaigning
	}
	s.campaigning = true
	lost := s.tracker != nil && s.leading
	s.mu.Unlock()
	// A call belongs to the session it began on (recipes/doc.go).
	session := s.conn.SessionID()
	if lost {
		// Our last leadership was Lost but its node may remain (a
		// disconnection as long as the session timeout, the session
		// alive: on an ensemble none expires without a leader). Taking
		// it back would lead again with the lost term's token: delete
		// it first, as a cleanup that outlives ctx, and lead with a new
		// node.
		cctx, cancel := retry.CleanupContext(ctx)
		err := s.deleteIfOurs(cctx)
		cancel()
		s.mu.Lock()
		if err == nil {
			s.leading = false
		}
		s.mu.Unlock()
	}
	if session != 0 && s.conn.SessionID() != session {
		s.mu.Lock()
		s.campaigning = false
		s.mu.Unlock()
		return zksim.ErrSessionExpired
	}
	defer func() {
		if err != nil {
			// A create of ours whose reply was lost may have been
			// applied: sync first, as the client may be served by an
			// ensemble member that has not applied it yet (it never saw
			// the create's zxid, so the member admits it), where the
			// node would look absent and stay behind in a live session.
			cctx, cancel := retry.CleanupContext(ctx)
			defer cancel()
			if syncDir(cctx, s.conn, s.path) == nil {
				_ = s.deleteIfOurs(cctx)
			}
		}
		s.mu.Lock()
		s.campaigning = false
		s.mu.Unlock()
	}()
	for {
		owned, st, err := seqnode.CreateOwned(ctx, s.conn, s.path, value, s.cfg.acl)
		if err != nil {
			return err
		}
		if owned {
			s.mu.Lock()
			s.tracker, s.token, s.leading = hold.Start(s.conn, s.path), st.Czxid, true
			s.mu.Unlock()
			return nil
		}
		var (
			exists bool
			w      <-chan zksim.Event
		)
		err = retry.Do(ctx, s.conn, func() error {
			var err error
			exists, _, w, err = s.conn.ExistsW(ctx, s.path)
			return err
		})
		if err != nil {
			return err
		}
		if !exists {
			continue
		}
		select {
		case ev := <-w:
			if ev.Type == zksim.EventNotWatching {
				if ev.Err != nil {
					return ev.Err
				}
				return zksim.ErrClosing
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// deleteIfOurs deletes the node at path if our session owns it. Between
// the check and the delete the node cannot change hands: it is ours until
// our session ends, and a session that ended cannot delete.
func (s *SingleNode) deleteIfOurs(ctx context.Context) error {
	st, err := seqnode.OwnedStat(ctx, s.conn, s.path)
	if errors.Is(err, seqnode.ErrNotOwner) || retry.Final(err) || (err == nil && st == nil) {
		return nil
	}
	if err != nil {
		return err
	}
	err = seqnode.DeleteOwned(ctx, s.conn, s.path)
	if retry.Final(err) {
		return nil
	}
	return err
}

// Resign gives up leadership: the state becomes Released and the node is
// deleted if it is still ours. It returns ErrNotLeader if we do not lead.
func (s *SingleNode) Resign(ctx context.Context) error {
	s.mu.Lock()
	t := s.tracker
	if t == nil || s.campaigning || !s.leading {
		s.mu.Unlock()
		return ErrNotLeader
	}
	s.mu.Unlock()
	t.Stop()
	if err := s.deleteIfOurs(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tracker == t {
		s.leading = false
	}
	return nil
}

// Leader returns the current leader, or ErrNoLeader when the node at path
// does not exist. Like Election.Leader it syncs first, so that a call that
// begins after a Campaign returned (on any client) sees that leader, or a
// later one.
func (s *SingleNode) Leader(ctx context.Context) (Leader, error) {
	if err := syncDir(ctx, s.conn, s.path); err != nil {
		return Leader{}, err
	}
	l, ok, _, err := read(ctx, s.conn, s.path, false)
	if err != nil {
		return Leader{}, err
	}
	if !ok {
		return Leader{}, ErrNoLeader
	}
	return l, nil
}

// Observe returns a channel that receives the leader each time it changes,
// as Election.Observe.
func (s *SingleNode) Observe(ctx context.Context) <-chan Leader {
	return observe(ctx, func(ctx context.Context, _ bool) (Leader, bool, <-chan zksim.Event, error) {
		l, ok, w, err := read(ctx, s.conn, s.path, true)
		if err != nil || ok {
			return l, ok, w, err
		}
		var exists bool
		err = retry.Do(ctx, s.conn, func() error {
			var err error
			exists, _, w, err = s.conn.ExistsW(ctx, s.path)
			return err
		})
		if err != nil || exists {
			return Leader{}, false, nil, err // created meanwhile: read again
		}
		return Leader{}, false, w, nil
	})
}

// Token returns the czxid of the node of our current or last leadership,
// 0 if we never led.
func (s *SingleNode) Token() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.token
}

// State returns what we know of our leadership (see the package doc).
func (s *SingleNode) State() recipes.HoldState { return s.current().State() }

// Watch returns the current state and a channel closed at its next change.
func (s *SingleNode) Watch() (recipes.HoldState, <-chan struct{}) { return s.current().Watch() }

// Done returns a channel closed when the current leadership ends.
func (s *SingleNode) Done() <-chan struct{} { return s.current().Done() }

func (s *SingleNode) current() *hold.Tracker {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tracker
}
