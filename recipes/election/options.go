package election

import (
	"errors"

	"github.com/zksim/zksim"
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

type config struct{ acl []zksim.ACL }

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

// Leader describes the current leader.
type Leader struct {
	Key     string // the path of the leader's node
	Value   []byte // the value it campaigned or last proclaimed with
	Token   int64  // the czxid of its node: larger for every new leader
	Session int64  // its session id (the node's EphemeralOwner)

	mzxid int64 // the node's last modification, to tell a proclaim apart
}
