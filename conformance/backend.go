package conformance

import (
	"context"
	"time"

	"github.com/zksim/zksim"
)

// Backend describes a zksim implementation to the suite: how to open
// sessions, which test controls it has, and the server settings the cases
// must know. Only Name, Connect and Facts.TickTime are required; a nil
// control makes the cases that need it skip, saying so.
type Backend struct {
	// Name identifies the backend in failure messages.
	Name string

	// Connect opens a new session that asks the server for sessionTimeout
	// (which the server clamps to [Facts.MinSessionTimeout,
	// Facts.MaxSessionTimeout]). It returns once the session is
	// established. The suite closes the Conn when the case ends.
	Connect func(ctx context.Context, sessionTimeout time.Duration) (zksim.Conn, error)

	// Expire makes the server expire c's session: its ephemerals are
	// deleted in one transaction and other sessions are notified. It
	// returns once the server has expired the session; c may learn of it
	// later (it then reports StateExpired and every call fails with
	// zksim.ErrSessionExpired). Nil when the backend cannot do it.
	Expire func(ctx context.Context, c zksim.Conn) error

	// Disconnect drops c's connection while its session lives on at the
	// server until its timeout runs out. c keeps its watches and
	// re-registers them when it reconnects. Nil when the backend cannot
	// do it; then Reconnect is nil too.
	Disconnect func(ctx context.Context, c zksim.Conn) error

	// Reconnect undoes Disconnect: it returns once c is connected to its
	// session again, or with zksim.ErrSessionExpired if the session expired
	// meanwhile.
	Reconnect func(ctx context.Context, c zksim.Conn) error

	// SetNextSequence is an optional white-box hook: it makes the next
	// sequential child created under parent get sequence number next (it
	// sets parent's internal child-create counter). Only a simulated server
	// can offer it; it lets the suite check the int32 wrap of sequence
	// numbers, which otherwise takes 2^31 creates.
	SetNextSequence func(ctx context.Context, parent string, next int32) error

	// Facts are the server settings the cases depend on.
	Facts Facts

	// Skip lists cases this backend cannot run, by name ("group/case", as
	// CaseNames returns), each with the exact reason, which the skip
	// message repeats. It is for limits of a client library (say, a
	// path check stricter than the server's), not for hiding bugs. Run
	// fails on a name that is not a case.
	Skip map[string]string

	// Only, when not nil, restricts Run to these cases (names as CaseNames
	// returns); the others are not run at all. It is for a second, narrow
	// run against a differently configured server (say, one with TTL nodes
	// off). Run fails on a name that is not a case.
	Only []string
}

// Facts are the settings of the server behind a Backend.
type Facts struct {
	// TickTime is the server's tickTime. Required.
	TickTime time.Duration

	// MinSessionTimeout and MaxSessionTimeout are the bounds the server
	// clamps requested session timeouts to; zero means ZooKeeper's
	// defaults, 2 and 20 ticks.
	MinSessionTimeout time.Duration
	MaxSessionTimeout time.Duration

	// ExtendedTypes tells whether TTL nodes are enabled
	// (zookeeper.extendedTypesEnabled). When false the suite checks that a
	// TTL create fails with zksim.ErrUnimplemented.
	ExtendedTypes bool

	// ContainerCheckInterval is how often the server deletes empty
	// containers and expired TTL nodes (znode.container.checkIntervalMs).
	// Zero means the backend does not reap in reasonable test time: the
	// reaping cases skip.
	ContainerCheckInterval time.Duration

	// MaxRequestBytes is the server's jute.maxbuffer; zero means
	// ZooKeeper's default, 1,048,575.
	MaxRequestBytes int
}

// DefaultMaxRequestBytes is ZooKeeper's default jute.maxbuffer.
const DefaultMaxRequestBytes = 0xfffff

func (f Facts) minSessionTimeout() time.Duration {
	if f.MinSessionTimeout > 0 {
		return f.MinSessionTimeout
	}
	return 2 * f.TickTime
}

func (f Facts) maxSessionTimeout() time.Duration {
	if f.MaxSessionTimeout > 0 {
		return f.MaxSessionTimeout
	}
	return 20 * f.TickTime
}

func (f Facts) maxRequestBytes() int {
	if f.MaxRequestBytes > 0 {
		return f.MaxRequestBytes
	}
	return DefaultMaxRequestBytes
}
