package election

import (
	"context"
	"errors"
	"fmt"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/internal/contend"
	"github.com/zksim/zksim/recipes/internal/retry"
	"github.com/zksim/zksim/recipes/internal/seqnode"
)

// CandidateName is the name part of a candidate node before its sequence
// number in the default layout: a candidate node of the election on dir is
// dir/_c_<guid>-n_<sequence>. To make one by hand for Resume, create
// dir+"/"+CandidateName with recipes.CreateProtectedEphemeralSequential.
// (In another layout, see WithLayout, Resume takes that layout's names.)
const CandidateName = "n_"

const candidateName = CandidateName

// Election is one participant in the election on a directory. Campaign,
// Resign and Proclaim must not be called concurrently on one Election;
// Leader, Observe and the accessors are safe at any time.
type Election struct {
	conn   zksim.Conn
	dir    string
	holder *contend.Holder // holds our leadership
	layout seqnode.Layout  // whose order the candidates follow
	name   string          // a candidate node's name before its sequence
}

// New returns a participant in the election on the directory dir, with
// predecessor watches. Nothing is sent to the server until a call.
func New(conn zksim.Conn, dir string, opts ...Option) *Election {
	return newElection(conn, dir, false, newConfig(opts))
}

// NewHerd returns a participant in the same election, except that while it
// waits it watches every candidate (the children of dir) instead of its
// predecessor, so each change wakes all waiters: the herd effect. It exists
// only to be measured against New in benchmarks; its Campaign is correct
// but costs O(n) notifications per change. Both kinds may take part in the
// same election.
func NewHerd(conn zksim.Conn, dir string, opts ...Option) *Election {
	return newElection(conn, dir, true, newConfig(opts))
}

func newElection(conn zksim.Conn, dir string, herd bool, cfg config) *Election {
	layout, name := cfg.layout.scheme()
	return &Election{conn: conn, dir: dir, layout: layout, name: name, holder: contend.NewHolder(contend.Contender{
		Conn: conn, Dir: dir, Name: name, Markers: []string{name},
		ACL: cfg.acl, Rule: contend.Exclusive, Herd: herd, Layout: layout,
	})}
}

// Campaign enters the election with value and blocks until we lead, ctx is
// done, or the session can no longer act (expired or closed). Connection
// losses while waiting are waited out. On error our candidate node is
// deleted and Campaign returns ctx.Err(), an error matching
// zksim.ErrSessionExpired or zksim.ErrClosing, ErrCampaigning, or one
// matching recipes.ErrForeignNodes when the directory holds candidates of
// a layout this election cannot order (see the package doc).
//
// After a Lost leadership, Campaign may be called again (on a new Conn if
// the session expired); it first deletes what is left of the old node, as
// a cleanup does (waiting out connection losses even after ctx is done;
// if the session ends meanwhile, it returns an error matching
// zksim.ErrSessionExpired, having campaigned on no other session). After
// Resign, or a Campaign that failed, it may be called again too.
func (e *Election) Campaign(ctx context.Context, value []byte) error {
	err := e.holder.Acquire(ctx, value, false)
	if errors.Is(err, contend.ErrBusy) {
		return ErrCampaigning
	}
	return err
}

// Resume continues a campaign with the existing candidate node key
// instead of creating one, as etcd's ResumeElection does: for a candidate
// node that our session created earlier, by an Election value that is gone
// (a component that restarted but kept its Conn) or by hand (see
// CandidateName). It checks that key is a candidate node of this
// election's directory owned by our session, then blocks as Campaign does
// until we lead with it; if key leads already, at once. The node keeps its
// data (the value it was created or proclaimed with).
//
// It returns ErrNotCandidate, having done nothing, when key is not such a
// node (or it is deleted while we wait), and ErrCampaigning as Campaign
// does. Once it has found key to be ours, the node is this Election's: on
// any error from then on (ctx done while waiting, say) Resume deletes it,
// as Campaign deletes its node.
func (e *Election) Resume(ctx context.Context, key string) error {
	err := e.holder.Adopt(ctx, key)
	switch {
	case errors.Is(err, contend.ErrBusy):
		return ErrCampaigning
	case errors.Is(err, contend.ErrNotOurs):
		return fmt.Errorf("%w: %w", ErrNotCandidate, err)
	}
	return err
}

// Resign gives up leadership: the state becomes Released and our node is
// deleted, so the next candidate takes over. It blocks until the delete is
// done, waiting out connection losses, or until ctx is done (then it may be
// called again). It returns ErrNotLeader if we do not lead.
func (e *Election) Resign(ctx context.Context) error {
	err := e.holder.Release(ctx)
	if errors.Is(err, contend.ErrNothingHeld) {
		return ErrNotLeader
	}
	return err
}

// Proclaim replaces the value of our node without a new election; Observe
// reports it. It returns ErrNotLeader if we do not lead or our node is gone.
func (e *Election) Proclaim(ctx context.Context, value []byte) error {
	h := e.holder.Current()
	if h == nil {
		return ErrNotLeader
	}
	err := retry.Do(ctx, e.conn, func() error {
		_, err := e.conn.Set(ctx, h.Path, value, -1)
		return err
	})
	if errors.Is(err, zksim.ErrNoNode) {
		return ErrNotLeader
	}
	return err
}

// Leader returns the current leader: the candidate with the lowest
// sequence number. It returns ErrNoLeader when there is no candidate. It
// blocks only for the round trips, and across connection losses.
//
// It syncs before it lists the candidates, so that a Leader call that
// begins after a Campaign returned (on any client) sees that candidate, or
// a later one: on an ensemble the caller's member may lag behind the
// leader's commits (ZooKeeper's reads are sequentially consistent, not
// linearizable; only a read after a sync sees every write that completed
// before it). The sync costs one round trip more. Observe needs none: its
// watch fires when its member applies a change it missed.
func (e *Election) Leader(ctx context.Context) (Leader, error) {
	if err := syncDir(ctx, e.conn, e.dir); err != nil {
		return Leader{}, err
	}
	for {
		l, ok, _, err := e.look(ctx, false)
		if err != nil {
			return Leader{}, err
		}
		if ok {
			return l, nil
		}
		if l.Key == "" {
			return Leader{}, ErrNoLeader
		}
		// The lowest candidate left between the listing and the read.
	}
}

// look finds the leader, with a watch when watch is set: on the leader's
// node if there is one (fires when it leaves or proclaims), else on the
// directory. It reports ok=false with l.Key set when the lowest candidate
// vanished before it could be read (look again), and with l.Key empty when
// there is no candidate.
func (e *Election) look(ctx context.Context, watch bool) (l Leader, ok bool, w <-chan zksim.Event, err error) {
	var children []string
	err = retry.Do(ctx, e.conn, func() error {
		var err error
		if watch {
			children, _, w, err = e.conn.ChildrenW(ctx, e.dir)
		} else {
			children, _, err = e.conn.Children(ctx, e.dir)
		}
		return err
	})
	if errors.Is(err, zksim.ErrNoNode) {
		if !watch {
			return Leader{}, false, nil, nil
		}
		// No directory yet: wait for it to be created.
		var exists bool
		err = retry.Do(ctx, e.conn, func() error {
			var err error
			exists, _, w, err = e.conn.ExistsW(ctx, e.dir)
			return err
		})
		if err != nil || exists {
			return Leader{Key: e.dir}, false, nil, err
		}
		return Leader{}, false, w, nil
	}
	if err != nil {
		return Leader{}, false, nil, err
	}
	nodes, _ := e.layout.Order(children, e.name)
	if len(nodes) == 0 {
		return Leader{}, false, w, nil
	}
	key := e.dir + "/" + nodes[0].Name
	l, ok, w, err = read(ctx, e.conn, key, watch)
	if !ok && err == nil {
		return Leader{Key: key}, false, nil, nil
	}
	return l, ok, w, err
}

// read reads the node at key as a leader, with a data watch when watch is
// set. ok is false when the node does not exist.
func read(ctx context.Context, conn zksim.Conn, key string, watch bool) (l Leader, ok bool, w <-chan zksim.Event, err error) {
	var (
		data []byte
		st   *zksim.Stat
	)
	err = retry.Do(ctx, conn, func() error {
		var err error
		if watch {
			data, st, w, err = conn.GetW(ctx, key)
		} else {
			data, st, err = conn.Get(ctx, key)
		}
		return err
	})
	if errors.Is(err, zksim.ErrNoNode) {
		return Leader{}, false, nil, nil
	}
	if err != nil {
		return Leader{}, false, nil, err
	}
	return Leader{Key: key, Value: data, Token: st.Czxid, Session: st.EphemeralOwner, mzxid: st.Mzxid}, true, w, nil
}

// Observe returns a channel that receives the leader each time it changes
// (a new leader, or a new value proclaimed), starting with the current one
// if there is one. It watches the leader's node only. The channel is closed
// when ctx is done or the session can no longer act (expired or closed);
// keep receiving until then, or cancel ctx.
func (e *Election) Observe(ctx context.Context) <-chan Leader {
	return observe(ctx, e.look)
}

// Key returns the path of our node for the current or last leadership, ""
// if we never led.
func (e *Election) Key() string { return e.holder.Key() }

// Token returns the czxid of our node for the current or last leadership
// (0 if we never led): a term number and fencing token.
func (e *Election) Token() int64 { return e.holder.Token() }

// Guard returns an op for a guarded [zksim.Conn.Multi], as etcd's
// Election's IsOwner: a [zksim.CheckOp] on our candidate node, so that a
// Multi that starts with it is applied only while we lead, as the server
// sees it, whatever we believe (a leader paused past its session cannot
// write through it). It returns ErrNotLeader when we do not lead (never
// did, resigned, or the leadership was Lost).
func (e *Election) Guard() (zksim.Op, error) {
	op, ok := e.holder.Guard()
	if !ok {
		return nil, ErrNotLeader
	}
	return op, nil
}

// State returns what we know of our leadership: NotHeld before we first
// lead, then Held, Doubtful, Lost or Released (see the package doc).
func (e *Election) State() recipes.HoldState { return e.holder.State() }

// Watch returns the current state and a channel closed at its next change
// (already closed once the leadership ended, or before we first lead).
func (e *Election) Watch() (recipes.HoldState, <-chan struct{}) { return e.holder.Watch() }

// Done returns a channel closed when the current leadership ends (Lost or
// Released); already closed when we do not lead.
func (e *Election) Done() <-chan struct{} { return e.holder.Done() }

// syncDir syncs the caller's member with the leader (Leader's doc),
// across connection losses.
func syncDir(ctx context.Context, conn zksim.Conn, dir string) error {
	return retry.Do(ctx, conn, func() error {
		_, err := conn.Sync(ctx, dir)
		return err
	})
}
