package barrier

import "github.com/zksim/zksim"

// Option configures a barrier.
type Option func(*config)

type config struct{ acl []zksim.ACL }

func newConfig(opts []Option) config {
	c := config{acl: zksim.OpenACL()}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// WithACL sets the ACL of the nodes the barrier creates, including missing
// parents. The default is zksim.OpenACL(). Every member's session must be
// allowed to create and delete children of the directory and, for a
// DoubleBarrier, to write the ready node (a member that joins an open
// group late writes to it).
func WithACL(acl []zksim.ACL) Option { return func(c *config) { c.acl = acl } }
