package zktest

import (
	"context"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

// EnsembleRealName names the real ZooKeeper ensemble backend.
const EnsembleRealName = "ZooKeeper-ensemble"

// Ensemble is a ZooKeeper ensemble opened for a test, with the controls a
// test needs to make its members disagree: a member that falls behind, one
// that crashes, one cut off from the others. Members are numbered from 0.
// [OpenRealEnsemble] opens a real one, [OpenMemEnsemble] a zkmem one. Every method blocks until what it says has
// happened, or ctx is done (then it returns ctx's error).
//
// Cases leave an ensemble as they found it: every member running, in the
// quorum, caught up.
//
// A backend that cannot do what a method asks (say, a simulated ensemble
// without read-only mode) returns an error wrapping errors.ErrUnsupported;
// the conformance cases that need it then skip, saying so.
type Ensemble interface {
	// Name identifies the backend in subtest names and failure messages.
	Name() string

	// Size returns the number of members.
	Size() int

	// Facts are the members' settings, zkmem's Options with every default
	// filled in.
	Facts() zkmem.Options

	// Connect opens a session by a client whose connect string lists
	// members, in this order, without shuffling: the client tries the
	// first; whenever its connection ends, or the member it tries is down
	// or refuses it (a member refuses a client that has seen a zxid newer
	// than the last it applied), it tries the next member of the list,
	// cyclically. It returns once a member has granted the session. The
	// caller closes the Conn.
	Connect(ctx context.Context, sessionTimeout time.Duration, members ...int) (zksim.Conn, error)

	// ConnectReadOnly opens a session on member i by a client that allows
	// read-only mode (the Java client's canBeReadOnly). A member cut off
	// from the quorum (Isolate) grants it in read-only mode. The caller
	// closes it.
	ConnectReadOnly(ctx context.Context, sessionTimeout time.Duration, i int) (ReadOnlyConn, error)

	// MemberOf returns the member c is connected to, or -1 while it is
	// not connected. c must come from Connect.
	MemberOf(c zksim.Conn) int

	// Move drops c's connection, and returns once c is connected again,
	// to the member its list gives it (see Connect), with its session. c
	// must come from Connect.
	Move(ctx context.Context, c zksim.Conn) error

	// Leader returns the member that leads, once a quorum serves.
	Leader(ctx context.Context) (int, error)

	// AppliedZxid returns the zxid of the last transaction member i
	// applied (a session's creation and closing are transactions too).
	AppliedZxid(ctx context.Context, i int) (int64, error)

	// Crash stops member i as a crash does. Its clients lose their
	// connection and move to the next member of their lists; its sessions
	// live on at the ensemble. A crashed leader is replaced (wait with
	// Leader).
	Crash(ctx context.Context, i int) error

	// Restart starts crashed member i again; it returns once the member
	// serves in the quorum, caught up with the leader.
	Restart(ctx context.Context, i int) error

	// Lag makes follower i stop applying what the leader commits (the
	// quorum commits without it) until CatchUp. It keeps serving its
	// clients from the state it had applied: their reads are stale, and
	// their writes and syncs are answered only after CatchUp. A real
	// member drops out of the quorum after lagging for about 5s (syncLimit):
	// cases keep their lags shorter.
	Lag(ctx context.Context, i int) error

	// CatchUp ends Lag: member i applies everything it missed, in order.
	CatchUp(ctx context.Context, i int) error

	// Isolate cuts member i off from every other member, and returns once
	// it serves in read-only mode: it grants read-only clients
	// (ConnectReadOnly) sessions, serves their reads from the state it had,
	// and refuses writes with zksim.ErrNotReadOnly; it refuses every other
	// client. The rest of the ensemble goes on (electing a new leader if i
	// led).
	Isolate(ctx context.Context, i int) error

	// Heal ends Isolate and returns once member i serves in the quorum
	// again, caught up.
	Heal(ctx context.Context, i int) error
}

// ReadOnlyConn is a session opened by a client that allows read-only mode:
// as much of a client as the read-only cases need.
type ReadOnlyConn interface {
	// ReadOnly reports whether the member granted the session in
	// read-only mode.
	ReadOnly() bool
	Get(ctx context.Context, path string) ([]byte, *zksim.Stat, error)
	Create(ctx context.Context, path string, data []byte, mode zksim.CreateMode) (string, error)
	Close() error
}
