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
// parents. The default is zksim.OpenACL().
func WithACL(acl []zksim.ACL) Option { return func(c *config) { c.acl = acl } }
