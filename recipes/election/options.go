package election

import (
	"errors"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes/internal/seqnode"
)

// Errors returned by this package, matched with errors.Is. ZooKeeper
// errors come through as they are: a campaign whose session expired returns
// an error matching zksim.ErrSessionExpired.
var (
	// ErrNotLeader is what Resign, Proclaim and Guard return when we do not lead
	// (never did, resigned, or lost the node).
	ErrNotLeader = errors.New("election: not the leader")
	// ErrNoLeader is what Leader returns when there is no candidate.
	ErrNoLeader = errors.New("election: no leader")
	// ErrCampaigning is what Campaign and Resume return when this
	// Election already leads or is campaigning.
	ErrCampaigning = errors.New("election: already campaigning or leading")
	// ErrNotCandidate is what Resume returns when the node it is given is
	// not a candidate node of the election owned by our session.
	ErrNotCandidate = errors.New("election: not a candidate node of this session")
)

// Option configures an election.
type Option func(*config)

type config struct {
	acl    []zksim.ACL
	layout Layout
}

func newConfig(opts []Option) config {
	c := config{acl: zksim.OpenACL()}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// WithACL sets the ACL of the nodes the election creates, including a
// missing directory. The default is zksim.OpenACL().
func WithACL(acl []zksim.ACL) Option { return func(c *config) { c.acl = acl } }

// Layout is whose znode names and order an election follows, so that it
// can share its directory with that library's elections (see the package
// doc, "Sharing an election with Curator and kazoo").
type Layout int

const (
	// Zksim is the recipes' own layout, the default: _c_<guid>-n_<seq>.
	Zksim Layout = iota
	// CuratorLatch is Curator 5's LeaderLatch: _c_<guid>-latch-<seq>.
	CuratorLatch
	// CuratorSelector is Curator 5's LeaderSelector, which is an
	// InterProcessMutex: _c_<guid>-lock-<seq>.
	CuratorSelector
	// Kazoo is kazoo 2.8's Election, which is a kazoo Lock:
	// <guid>__lock__<seq>.
	Kazoo
)

// String names the layout.
func (l Layout) String() string {
	switch l {
	case CuratorLatch:
		return "CuratorLatch"
	case CuratorSelector:
		return "CuratorSelector"
	case Kazoo:
		return "Kazoo"
	}
	return "Zksim"
}

// scheme returns the layout of the shared core and the name of a
// candidate node in l.
func (l Layout) scheme() (seqnode.Layout, string) {
	switch l {
	case CuratorLatch:
		return seqnode.Curator, "latch-"
	case CuratorSelector:
		return seqnode.Curator, "lock-"
	case Kazoo:
		return seqnode.Kazoo, "__lock__"
	}
	return seqnode.Zksim, candidateName
}

// WithLayout makes the election name and order its candidate nodes as
// another library's election does, so that both elect one leader between
// them on one directory. Every candidate of a directory, whatever its
// library, must use the same layout. A candidate refuses (Campaign
// returns an error matching recipes.ErrForeignNodes) a directory that
// holds candidate nodes of a layout it cannot order. A layout other than
// the four constants counts as Zksim. NewSingleNode ignores it.
func WithLayout(l Layout) Option { return func(c *config) { c.layout = l } }

// Leader describes the current leader.
type Leader struct {
	Key     string // the path of the leader's node
	Value   []byte // the value it campaigned or last proclaimed with
	Token   int64  // the czxid of its node: larger for every new leader
	Session int64  // its session id (the node's EphemeralOwner)

	mzxid int64 // the node's last modification, to tell a proclaim apart
}
