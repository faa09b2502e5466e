package zktest

import (
	"context"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zkserver"
)

// The names of the two backends, which are also the names of the subtests
// Run starts.
const (
	// MemName names the zkmem backend.
	MemName = "zkmem"
	// RealName names the real ZooKeeper, reached through gozk.
	RealName = "ZooKeeper"
)

// Backend is one zksim implementation opened for a test: how to open
// sessions on it, the test controls it has, and the settings of its server.
// [OpenMem] and [OpenReal] open the two the project has; another
// implementation can fill one in by hand (only Name and Connect are
// required). A nil control means the backend cannot do that; tests that
// need it skip.
type Backend struct {
	// Name identifies the backend in subtest names and failure messages.
	Name string

	// Facts are the settings of the server, zkmem's Options with every
	// default filled in (see [WithDefaults]). The zkmem backend runs with
	// exactly these; the real server was started with the configuration
	// they imply (see [ServerOptions]).
	Facts zkmem.Options

	// Connect opens a new session that asks the server for sessionTimeout
	// (which the server clamps to [Facts.MinSessionTimeout,
	// Facts.MaxSessionTimeout]). It returns once the session is
	// established. The caller closes the Conn.
	Connect func(ctx context.Context, sessionTimeout time.Duration) (zksim.Conn, error)

	// Expire makes the server expire c's session: its ephemerals are
	// deleted in one transaction and other sessions are notified. It
	// returns once the server has expired the session; c may learn of it
	// later (it then reports StateExpired and every call fails with
	// zksim.ErrSessionExpired). c must come from Connect. Nil when the
	// backend cannot do it.
	Expire func(ctx context.Context, c zksim.Conn) error

	// Disconnect drops c's connection while its session lives on at the
	// server until its timeout runs out. c keeps its watches and
	// re-registers them when it reconnects. c must come from Connect. Nil
	// when the backend cannot do it; then Reconnect is nil too.
	Disconnect func(ctx context.Context, c zksim.Conn) error

	// Reconnect undoes Disconnect: it returns once c is connected to its
	// session again, or with zksim.ErrSessionExpired if the session expired
	// meanwhile.
	Reconnect func(ctx context.Context, c zksim.Conn) error

	// SetNextSequence is a white-box hook: it makes the next sequential
	// child created under parent get sequence number next (it sets
	// parent's internal child-create counter). Only a simulated server can
	// offer it; it lets a test reach the int32 wrap of sequence numbers,
	// which otherwise takes 2^31 creates. Nil on a real server.
	SetNextSequence func(ctx context.Context, parent string, next int32) error

	// Mem is the zkmem server behind the backend; nil on a real server.
	Mem *zkmem.Server

	// Real is the real server behind the backend; nil on zkmem.
	Real *zkserver.Server

	// WireAddr, when not empty, is the host:port of a ZooKeeper
	// client-protocol endpoint that serves the backend's data tree, for
	// tests that need a wire-protocol client beside the backend's Conns
	// (say, to see watch events in the order they come off one
	// connection). A backend that is itself a wire server (zkwire) sets it;
	// with Real or Mem set, tests can find one without it.
	WireAddr string
}
