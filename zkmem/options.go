package zkmem

import (
	"fmt"
	"maps"
	"net/netip"
	"time"

	"github.com/zksim/zksim"
)

// Options configure a Server. The zero value is a server with ZooKeeper's
// defaults: a zero field takes its default. A negative duration or size,
// and bounds that leave no session timeout to grant, are errors (see
// Validate), as in a real server's configuration.
type Options struct {
	// TickTime is the server's basic time unit (default 2s). Session
	// timeouts are negotiated within [2, 20] ticks unless the bounds below
	// are set.
	TickTime time.Duration
	// MinSessionTimeout and MaxSessionTimeout bound the negotiated session
	// timeout (defaults 2*TickTime and 20*TickTime).
	MinSessionTimeout time.Duration
	MaxSessionTimeout time.Duration
	// ExtendedTypes enables TTL nodes (zookeeper.extendedTypesEnabled).
	// Without it a TTL create fails with ErrUnimplemented, as on a real
	// server with the default configuration.
	ExtendedTypes bool
	// ContainerCheckInterval is how often empty containers and expired TTL
	// nodes are looked for and deleted (znode.container.checkIntervalMs,
	// default 60s).
	ContainerCheckInterval time.Duration
	// MaxRequestBytes is the largest request the server accepts
	// (jute.maxbuffer, default 1,048,575 bytes). A larger request makes the
	// server close the connection: the caller sees ErrConnectionLoss.
	MaxRequestBytes int
	// SortedChildren makes Children and ChildrenW return names sorted
	// bytewise. By default they come in the order a ZooKeeper 3.8.0 server
	// returns them after the same creates and deletes: the iteration order
	// of the Java hash set holding a node's children, neither sorted nor in
	// creation order. Code that relies on an order must sort; this option
	// only hides the server's order.
	SortedChildren bool
	// ReconfigEnabled is the server's reconfigEnabled setting. A reconfig
	// request (OpReconfig, from a wire client) fails with
	// ErrReconfigDisabled (-123) when it is off, the default. On, a
	// standalone server, which cannot reconfigure, fails it with
	// ErrUnimplemented (-6), as a standalone ZooKeeper 3.8 does, and an
	// ensemble (NewEnsemble) checks it as a 3.8 leader does (see
	// Reconfig). Either way the request consumes a zxid, as the real
	// server's error transaction does.
	ReconfigEnabled bool
	// SASLUsers are the users and passwords a client can authenticate as
	// with SASL DIGEST-MD5 (the SASL request, op 102, which the wire
	// server carries), as the user_NAME="password" entries of a JAAS
	// Server section configure a real server whose
	// zookeeper.authProvider.1 is the SASLAuthenticationProvider (ParseJAAS
	// reads such a file). A client that authenticates as NAME gets the
	// identity sasl:NAME on its connection, which ACLs of the "sasl"
	// scheme name. nil is a server without SASL, as a real server without
	// a JAAS file: a SASL request is answered with no token and nothing
	// more, and "sasl" ACLs are invalid. A non-nil empty map configures
	// SASL with no user.
	SASLUsers map[string]string
	// SuperDigest is zookeeper.DigestAuthenticationProvider.superDigest:
	// "super:" then the base64 SHA-1 of "super:PASSWORD", as
	// zksim.DigestID("super", PASSWORD) renders it. A connection that adds
	// the digest auth "super:PASSWORD" passes every ACL check. "" for none.
	SuperDigest string
}

const (
	defaultTickTime               = 2 * time.Second
	defaultContainerCheckInterval = 60 * time.Second
	defaultMaxRequestBytes        = 0xfffff
	defaultSessionTimeout         = 10 * time.Second
)

// Validate reports what a server cannot run with, naming the field: a
// negative TickTime, MinSessionTimeout, MaxSessionTimeout,
// ContainerCheckInterval or MaxRequestBytes, or a MinSessionTimeout larger
// than the MaxSessionTimeout (each after defaults: a real server refuses
// "minSessionTimeout must not be larger than maxSessionTimeout" rather
// than grant a timeout outside the bounds it was given).
func (o Options) Validate() error {
	for _, f := range []struct {
		name string
		d    time.Duration
	}{
		{"TickTime", o.TickTime},
		{"MinSessionTimeout", o.MinSessionTimeout},
		{"MaxSessionTimeout", o.MaxSessionTimeout},
		{"ContainerCheckInterval", o.ContainerCheckInterval},
	} {
		if f.d < 0 {
			return fmt.Errorf("zkmem: Options.%s %v is negative", f.name, f.d)
		}
	}
	if o.MaxRequestBytes < 0 {
		return fmt.Errorf("zkmem: Options.MaxRequestBytes %d is negative", o.MaxRequestBytes)
	}
	if d := o.withDefaults(); d.MinSessionTimeout > d.MaxSessionTimeout {
		return fmt.Errorf("zkmem: Options.MinSessionTimeout %v is larger than MaxSessionTimeout %v", d.MinSessionTimeout, d.MaxSessionTimeout)
	}
	return nil
}

func (o Options) withDefaults() Options {
	if o.TickTime <= 0 {
		o.TickTime = defaultTickTime
	}
	if o.MinSessionTimeout <= 0 {
		o.MinSessionTimeout = 2 * o.TickTime
	}
	if o.MaxSessionTimeout <= 0 {
		o.MaxSessionTimeout = 20 * o.TickTime
	}
	if o.ContainerCheckInterval <= 0 {
		o.ContainerCheckInterval = defaultContainerCheckInterval
	}
	if o.MaxRequestBytes <= 0 {
		o.MaxRequestBytes = defaultMaxRequestBytes
	}
	o.SASLUsers = maps.Clone(o.SASLUsers)
	return o
}

// ConnOption configures a Conn opened by Server.Connect.
type ConnOption func(*connConfig)

type connConfig struct {
	sessionTimeout time.Duration
	reconnectDelay time.Duration
	transport      func(zksim.Event, func(zksim.Event))
	addr           netip.Addr
	members        []int // ensemble members to try, in order (WithMembers)
	canBeReadOnly  bool  // WithCanBeReadOnly
	committed      bool  // WithCommittedView
}

// WithClientAddr sets the address the Conn's connections come from
// (default DefaultClientAddr, 127.0.0.1): its session's "ip" identity,
// which "ip" ACLs are matched against and whoAmI reports, as a server
// would see a client at that address. An IPv4-mapped IPv6 address counts
// as its IPv4 address; an IPv6 one matches no "ip" ACL, as on a ZooKeeper
// 3.8 server. Connect fails for the zero netip.Addr.
func WithClientAddr(addr netip.Addr) ConnOption {
	return func(c *connConfig) { c.addr = addr }
}

// WithEventTransport makes the Conn hand every watch event for its session
// to hold instead of taking it in; whoever holds it passes it on later by
// calling deliver (the same function for every event of the Conn). It is
// the seam a simulator uses to schedule delivery (per-session FIFO, delays,
// reordering across sessions). Events must be delivered in the order they
// were held for a session to see ZooKeeper's ordering guarantees. hold is
// called in the order the server produces the events, with the server's
// lock held: it must only record the event, never call the server.
func WithEventTransport(hold func(ev zksim.Event, deliver func(zksim.Event))) ConnOption {
	return func(c *connConfig) { c.transport = hold }
}

// WithSessionTimeout sets the session timeout the client asks for (default
// 10s). The server clamps it to [MinSessionTimeout, MaxSessionTimeout].
func WithSessionTimeout(d time.Duration) ConnOption {
	return func(c *connConfig) { c.sessionTimeout = d }
}

// WithReconnectDelay sets how long the Conn stays disconnected after a
// fault drops its connection (a lost reply, a dropped request, an oversized
// request) before it reconnects by itself. The default, 0, reconnects at
// once, before the failed call returns. A connection dropped with
// Control.Disconnect stays down until Control.Reconnect.
func WithReconnectDelay(d time.Duration) ConnOption {
	return func(c *connConfig) { c.reconnectDelay = d }
}
