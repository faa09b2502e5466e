package zktest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

// EnsembleMemName names the zkmem ensemble backend.
const EnsembleMemName = "zkmem-ensemble"

// memRetry is how often the zkmem ensemble's adapter tries again a
// connection that no member grants yet.
const memRetry = 2 * time.Millisecond

// OpenMemEnsemble starts a zkmem ensemble of n voting members with opts
// and read-only mode on (zkmem.EnsembleOptions.ReadOnly), closed when t
// ends, and returns it as an Ensemble whose sessions are *zkmem.Conn.
//
// zkmem's controls take effect at once, and a zkmem ensemble without a
// leader waits for Ensemble.Elect; this adapter elects as a real ensemble
// does by itself: whenever a control leaves the ensemble without a leader,
// it elects one at once (when a quorum is left). Connect tries again until
// a member grants the session or ctx is done, as a real client keeps
// trying its connect string. A read-only session (ConnectReadOnly) is a
// session of the ensemble, not one local to its member as ZooKeeper's is
// (see zkmem.Ensemble.Connect).
func OpenMemEnsemble(t testing.TB, n int, opts zkmem.Options) Ensemble {
	t.Helper()
	e := zkmem.NewEnsemble(n, zkmem.EnsembleOptions{Options: opts, ReadOnly: true})
	t.Cleanup(e.Close)
	return MemEnsemble(e)
}

// MemEnsemble returns e as an Ensemble (see OpenMemEnsemble). The caller
// closes e.
func MemEnsemble(e *zkmem.Ensemble) Ensemble { return &memEnsemble{e: e} }

// memEnsemble is an Ensemble over a zkmem.Ensemble.
type memEnsemble struct{ e *zkmem.Ensemble }

func (m *memEnsemble) Name() string         { return EnsembleMemName }
func (m *memEnsemble) Size() int            { return m.e.Size() }
func (m *memEnsemble) Facts() zkmem.Options { return m.e.Server().Options() }

// connect opens a Conn with opts, trying again while no member grants it.
func (m *memEnsemble) connect(ctx context.Context, opts ...zkmem.ConnOption) (*zkmem.Conn, error) {
	for {
		c, err := m.e.Connect(opts...)
		if !errors.Is(err, zkmem.ErrNoMember) {
			return c, err
		}
		m.elect()
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("zktest: no member granted a session: %w", ctx.Err())
		case <-time.After(memRetry):
		}
	}
}

func (m *memEnsemble) Connect(ctx context.Context, sessionTimeout time.Duration, members ...int) (zksim.Conn, error) {
	return m.connect(ctx, zkmem.WithMembers(members...), zkmem.WithSessionTimeout(sessionTimeout))
}

func (m *memEnsemble) ConnectReadOnly(ctx context.Context, sessionTimeout time.Duration, i int) (ReadOnlyConn, error) {
	c, err := m.connect(ctx, zkmem.WithMembers(i), zkmem.WithCanBeReadOnly(), zkmem.WithSessionTimeout(sessionTimeout))
	if err != nil {
		return nil, err
	}
	return memReadOnlyConn{c}, nil
}

func (m *memEnsemble) MemberOf(c zksim.Conn) int {
	mc, ok := c.(*zkmem.Conn)
	if !ok || c.State() != zksim.StateConnected {
		return -1
	}
	for i := range m.e.Size() {
		for _, id := range m.e.Sessions(i) {
			if id == mc.SessionID() {
				return i
			}
		}
	}
	return -1
}

func (m *memEnsemble) Move(ctx context.Context, c zksim.Conn) error {
	mc, err := asZkmem(c)
	if err != nil {
		return err
	}
	ctl := control(mc)
	ctl.Disconnect()
	// Reconnect fails with ErrConnectionLoss when no member takes the
	// client yet: the Conn then waits for one, and so does Move.
	if err := ctl.Reconnect(); err != nil && !errors.Is(err, zksim.ErrConnectionLoss) {
		return err
	}
	for mc.State() != zksim.StateConnected {
		if mc.State() == zksim.StateExpired || mc.State() == zksim.StateClosed {
			return fmt.Errorf("zktest: the session ended while moving: %v", mc.State())
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("zktest: waiting for the session to reconnect: %w", ctx.Err())
		case <-time.After(memRetry):
		}
	}
	return nil
}

// elect elects a leader if there is none and a quorum is left.
func (m *memEnsemble) elect() {
	if m.e.Leader() < 0 {
		_, _ = m.e.Elect() // ErrNoQuorum: nothing to elect yet
	}
}

func (m *memEnsemble) Leader(context.Context) (int, error) {
	if l := m.e.Leader(); l >= 0 {
		return l, nil
	}
	return m.e.Elect()
}

func (m *memEnsemble) AppliedZxid(_ context.Context, i int) (int64, error) {
	if err := m.check(i); err != nil {
		return 0, err
	}
	return m.e.Applied(i), nil
}

// check reports a member index out of range as an error (zkmem panics).
func (m *memEnsemble) check(i int) error {
	if i < 0 || i >= m.e.Size() {
		return fmt.Errorf("zktest: no member %d in an ensemble of %d", i, m.e.Size())
	}
	return nil
}

// control runs f on member i once i is known to exist, then elects a
// leader if the ensemble lost its own.
func (m *memEnsemble) control(i int, f func(int)) error {
	if err := m.check(i); err != nil {
		return err
	}
	f(i)
	m.elect()
	return nil
}

func (m *memEnsemble) Crash(_ context.Context, i int) error   { return m.control(i, m.e.Crash) }
func (m *memEnsemble) Restart(_ context.Context, i int) error { return m.control(i, m.e.Restart) }
func (m *memEnsemble) Lag(_ context.Context, i int) error     { return m.control(i, m.e.Lag) }
func (m *memEnsemble) CatchUp(_ context.Context, i int) error { return m.control(i, m.e.CatchUp) }
func (m *memEnsemble) Isolate(_ context.Context, i int) error { return m.control(i, m.e.Isolate) }
func (m *memEnsemble) Heal(_ context.Context, i int) error    { return m.control(i, m.e.Heal) }

// memReadOnlyConn is a zkmem Conn as a ReadOnlyConn.
type memReadOnlyConn struct{ *zkmem.Conn }

func (c memReadOnlyConn) ReadOnly() bool { return c.State() == zksim.StateConnectedReadOnly }

func (c memReadOnlyConn) Create(ctx context.Context, path string, data []byte, mode zksim.CreateMode) (string, error) {
	return c.Conn.Create(ctx, path, data, mode, zksim.OpenACL())
}
