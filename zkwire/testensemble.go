package zkwire

import (
	"fmt"
	"net"
	"sync"
	"testing"

	"github.com/zksim/zksim/zkmem"
)

// TestEnsemble is a zkmem ensemble served over the wire on loopback for a
// test: each member on its own 127.0.0.1 port (NewEnsemble, ServeMember),
// and the control endpoint on another.
type TestEnsemble struct {
	*Server
	addrs   []string
	control string
	wg      sync.WaitGroup
}

// NewTestEnsemble starts a TestEnsemble of n members over a fresh
// zkmem.NewEnsemble(n, ensOpts), with the wire server's options opts.
// t.Cleanup closes it. It fails t where zkmem.NewEnsemble would panic.
func NewTestEnsemble(t testing.TB, n int, ensOpts zkmem.EnsembleOptions, opts Options) *TestEnsemble {
	t.Helper()
	te, err := StartEnsemble(n, ensOpts, opts)
	if err != nil {
		t.Fatalf("zkwire: %v", err)
	}
	t.Cleanup(te.Close)
	return te
}

// StartEnsemble is NewTestEnsemble without a testing.TB: the caller closes
// the ensemble with Close.
func StartEnsemble(n int, ensOpts zkmem.EnsembleOptions, opts Options) (*TestEnsemble, error) {
	if err := ensOpts.Validate(); err != nil {
		return nil, err
	}
	if n < 1 || ensOpts.Observers < 0 || ensOpts.Observers >= n {
		return nil, fmt.Errorf("zkwire: an ensemble of %d members with %d observers", n, ensOpts.Observers)
	}
	var lns []net.Listener
	closeAll := func() {
		for _, ln := range lns {
			ln.Close()
		}
	}
	for range n + 1 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			closeAll()
			return nil, err
		}
		lns = append(lns, ln)
	}
	te := &TestEnsemble{Server: NewEnsemble(zkmem.NewEnsemble(n, ensOpts), opts)}
	te.control = "http://" + lns[n].Addr().String()
	for i, ln := range lns[:n] {
		te.addrs = append(te.addrs, ln.Addr().String())
		te.wg.Add(1)
		go func() {
			defer te.wg.Done()
			te.ServeMember(i, ln)
		}()
	}
	te.wg.Add(1)
	go func() {
		defer te.wg.Done()
		te.ServeControl(lns[n])
	}()
	return te, nil
}

// Addrs returns the members' addresses, "127.0.0.1:port", member 0 first:
// a client's connect string.
func (te *TestEnsemble) Addrs() []string { return append([]string(nil), te.addrs...) }

// Addr returns member i's address.
func (te *TestEnsemble) Addr(i int) string { return te.addrs[i] }

// ControlURL returns the control endpoint's base URL,
// "http://127.0.0.1:port".
func (te *TestEnsemble) ControlURL() string { return te.control }

// Close closes the control endpoint, the wire server and the ensemble, and
// waits for the listeners' goroutines.
func (te *TestEnsemble) Close() {
	te.Server.Close()
	te.ens.Close()
	te.wg.Wait()
}
