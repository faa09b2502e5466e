package queue

import (
	"errors"

	"github.com/zksim/zksim"
)

// Errors returned by this package, matched with errors.Is.
var (
	// ErrEmpty is what Peek and TryTake return when the queue has no item
	// (for a LockingQueue's TryTake: no item that is not claimed).
	ErrEmpty = errors.New("queue: empty")
	// ErrClaimLost is what Ack and Release return when the consumer no
	// longer holds the item: its session expired or its claim was deleted,
	// and the item is (or will be) delivered to another consumer.
	ErrClaimLost = errors.New("queue: claim on the item lost")
)

// Option configures a queue.
type Option func(*config)

type config struct{ acl []zksim.ACL }

func newConfig(opts []Option) config {
	c := config{acl: zksim.OpenACL()}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// WithACL sets the ACL of the nodes the queue creates, including missing
// directories. The default is zksim.OpenACL().
func WithACL(acl []zksim.ACL) Option { return func(c *config) { c.acl = acl } }
