package zktest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zkserver"
)

// OpenRealEnsemble starts a real ZooKeeper ensemble of n members on
// loopback (zkserver.StartEnsemble) with the settings opts describe (see
// [ServerOptions]; SASLUsers is not supported), stopped when t ends, and
// returns it as an Ensemble whose sessions are gozk Conns. Outside CI it
// skips t when no ZooKeeper is installed; under CI=true it fails t instead.
//
// Each Conn reaches the members through its own zkserver.Router, which
// walks the Conn's member list in order. Lag and Isolate act on the links
// between members (zkserver.Ensemble.Lag, Isolate). A ZooKeeper 3.8 member
// in read-only mode serves local sessions only, so Isolate also restarts
// the member with localSessionsEnabled=true (its clients lose their
// connections, as they do anyway when a member leaves the quorum), and Heal
// restarts it with the ensemble's configuration.
func OpenRealEnsemble(t testing.TB, n int, opts zkmem.Options, extra ...zkserver.Option) Ensemble {
	t.Helper()
	facts := WithDefaults(opts)
	srvOpts, err := ServerOptions(facts)
	if err != nil {
		t.Fatal(err)
	}
	e := zkserver.StartEnsemble(t, n, append(srvOpts, extra...)...)
	t.Logf("zktest: a real %d-member ensemble started in %v", n, e.StartupTime().Round(time.Millisecond))
	return &realEnsemble{e: e, facts: facts, routerTable: newRouterTable(EnsembleRealName)}
}

// realEnsemble is an Ensemble over a zkserver.Ensemble.
type realEnsemble struct {
	e     *zkserver.Ensemble
	facts zkmem.Options
	*routerTable
}

func (r *realEnsemble) Name() string         { return EnsembleRealName }
func (r *realEnsemble) Size() int            { return r.e.Size() }
func (r *realEnsemble) Facts() zkmem.Options { return r.facts }

func (r *realEnsemble) Connect(ctx context.Context, sessionTimeout time.Duration, members ...int) (zksim.Conn, error) {
	router, err := r.e.Router(members...)
	if err != nil {
		return nil, err
	}
	return r.connect(ctx, router, sessionTimeout)
}

func (r *realEnsemble) ConnectReadOnly(ctx context.Context, sessionTimeout time.Duration, i int) (ReadOnlyConn, error) {
	return zkserver.DialReadOnly(ctx, r.e.Addr(i), sessionTimeout, 0)
}

func (r *realEnsemble) MemberOf(c zksim.Conn) int {
	router, err := r.router(c)
	if err != nil || c.State() != zksim.StateConnected {
		return -1
	}
	return router.Member()
}

func (r *realEnsemble) Leader(ctx context.Context) (int, error) { return r.e.Leader(ctx) }

func (r *realEnsemble) AppliedZxid(ctx context.Context, i int) (int64, error) {
	return r.e.LastZxid(ctx, i)
}

func (r *realEnsemble) Crash(_ context.Context, i int) error {
	r.e.Crash(i)
	return nil
}

func (r *realEnsemble) Restart(ctx context.Context, i int) error { return r.e.Restart(ctx, i) }

func (r *realEnsemble) Lag(_ context.Context, i int) error {
	r.e.Lag(i)
	return nil
}

func (r *realEnsemble) CatchUp(ctx context.Context, i int) error {
	r.e.CatchUp(i)
	// Wait until the member has applied what the leader had when the
	// held messages were released.
	leader, err := r.e.Leader(ctx)
	if err != nil {
		return err
	}
	target, err := r.e.LastZxid(ctx, leader)
	if err != nil {
		return err
	}
	for {
		z, err := r.e.LastZxid(ctx, i)
		if err == nil && z >= target {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("zktest: member %d catching up to %#x (at %#x, %v): %w", i, target, z, err, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func (r *realEnsemble) Isolate(ctx context.Context, i int) error {
	r.e.Isolate(i)
	r.e.Crash(i)
	r.e.SetMemberConfig(i, "localSessionsEnabled=true")
	return r.e.Restart(ctx, i, zkserver.ModeReadOnly)
}

func (r *realEnsemble) Heal(ctx context.Context, i int) error {
	r.e.Crash(i)
	r.e.SetMemberConfig(i)
	r.e.Heal(i)
	return r.e.Restart(ctx, i)
}
