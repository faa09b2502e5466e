package zktest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zkserver"
	"github.com/zksim/zksim/zkwire"
)

// EnsembleWireName names the zkmem ensemble served over TCP, one port per
// member (zkwire.NewEnsemble).
const EnsembleWireName = "zkwire-ensemble"

// OpenWireEnsemble starts a zkmem ensemble of n voting members with opts
// and read-only mode on, served over TCP on loopback with one port per
// member (zkwire.NewTestEnsemble), closed when t ends, and returns it as
// an Ensemble whose sessions are gozk Conns: go-zookeeper over TCP, each
// reaching the members through its own zkserver.Router, as on the real
// ensemble (OpenRealEnsemble). The member controls are the wire server's
// (zkwire.Server.ControlMember), which take effect at once and elect a
// leader as soon as the ensemble has none.
func OpenWireEnsemble(t testing.TB, n int, opts zkmem.Options) Ensemble {
	t.Helper()
	te := zkwire.NewTestEnsemble(t, n, zkmem.EnsembleOptions{Options: opts, ReadOnly: true}, zkwire.Options{})
	w := &wireEnsemble{te: te, routerTable: newRouterTable(EnsembleWireName)}
	t.Cleanup(w.closeAll) // before the ensemble closes
	return w
}

// WireEnsemble returns te as an Ensemble (see OpenWireEnsemble). The
// caller closes te, after closing the Conns it opened.
func WireEnsemble(te *zkwire.TestEnsemble) Ensemble {
	return &wireEnsemble{te: te, routerTable: newRouterTable(EnsembleWireName)}
}

// wireEnsemble is an Ensemble over a zkwire.TestEnsemble.
type wireEnsemble struct {
	te *zkwire.TestEnsemble
	*routerTable
}

func (w *wireEnsemble) Name() string         { return EnsembleWireName }
func (w *wireEnsemble) Size() int            { return w.te.Ensemble().Size() }
func (w *wireEnsemble) Facts() zkmem.Options { return w.te.Ensemble().Server().Options() }

func (w *wireEnsemble) Connect(ctx context.Context, sessionTimeout time.Duration, members ...int) (zksim.Conn, error) {
	router, err := zkserver.NewRouter(w.te.Addrs(), members...)
	if err != nil {
		return nil, err
	}
	return w.connect(ctx, router, sessionTimeout)
}

func (w *wireEnsemble) ConnectReadOnly(ctx context.Context, sessionTimeout time.Duration, i int) (ReadOnlyConn, error) {
	if err := w.check(i); err != nil {
		return nil, err
	}
	return zkserver.DialReadOnly(ctx, w.te.Addr(i), sessionTimeout, 0)
}

// MemberOf finds the member c's session is attached to.
func (w *wireEnsemble) MemberOf(c zksim.Conn) int {
	if _, err := w.router(c); err != nil || c.State() != zksim.StateConnected {
		return -1
	}
	e := w.te.Ensemble()
	for i := range e.Size() {
		if slices.Contains(e.Sessions(i), c.SessionID()) {
			return i
		}
	}
	return -1
}

func (w *wireEnsemble) Leader(context.Context) (int, error) {
	e := w.te.Ensemble()
	if l := e.Leader(); l >= 0 {
		return l, nil
	}
	return e.Elect()
}

func (w *wireEnsemble) AppliedZxid(_ context.Context, i int) (int64, error) {
	if err := w.check(i); err != nil {
		return 0, err
	}
	return w.te.Ensemble().Applied(i), nil
}

// check reports a member index out of range as an error.
func (w *wireEnsemble) check(i int) error {
	if n := w.Size(); i < 0 || i >= n {
		return fmt.Errorf("zktest: no member %d in an ensemble of %d", i, n)
	}
	return nil
}

func (w *wireEnsemble) Crash(_ context.Context, i int) error {
	return w.te.ControlMember(i, zkwire.MemberCrash)
}

func (w *wireEnsemble) Restart(_ context.Context, i int) error {
	return w.te.ControlMember(i, zkwire.MemberRestart)
}

func (w *wireEnsemble) Lag(_ context.Context, i int) error {
	return w.te.ControlMember(i, zkwire.MemberLag)
}

func (w *wireEnsemble) CatchUp(_ context.Context, i int) error {
	return w.te.ControlMember(i, zkwire.MemberCatchUp)
}

func (w *wireEnsemble) Isolate(_ context.Context, i int) error {
	return w.te.ControlMember(i, zkwire.MemberIsolate)
}

func (w *wireEnsemble) Heal(_ context.Context, i int) error {
	return w.te.ControlMember(i, zkwire.MemberHeal)
}
